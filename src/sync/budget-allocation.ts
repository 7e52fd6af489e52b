import { API_STREAMS, STREAM_FACTS, type ApiStream, type ShareSettings } from './stream-facts.js';

// One budget across streams (docs/rate-limit.md, "One budget"): the partner API's limit over an
// interval is divided between the streams that have work, highest priority first, each stream's
// share being the floor it keeps while higher-priority streams are busy. Pure: the streams and
// `status` measure the spend (src/api/spend-ledger.ts) and call this.

/**
 * The app's own OAuth token refreshes (`/oauth/token`) are no stream but are counted on their
 * own, right after the payment intents whose reads need the token.
 */
const OAUTH_BUDGET = { priority: 3, share: 0 } as const;

/**
 * What the ledger counts requests against: every stream that reads the partner API and the app's
 * token refreshes, in priority order (each stream's `reads.budget`, src/sync/stream-facts.ts).
 * The route families map onto these (src/api/credential-routing.ts).
 */
export type BudgetStream = ApiStream | 'oauth';

function budgetOf(stream: BudgetStream): { priority: number; share: number | keyof ShareSettings } {
  return stream === 'oauth' ? OAUTH_BUDGET : STREAM_FACTS[stream].reads.budget;
}

export const BUDGET_STREAMS: readonly BudgetStream[] = [...API_STREAMS, 'oauth' as const].sort(
  (a, b) => budgetOf(a).priority - budgetOf(b).priority,
);

export function isBudgetStream(value: string): value is BudgetStream {
  return (BUDGET_STREAMS as readonly string[]).includes(value);
}

/** The locations pass plans its refreshes within a quarter of the limit: its share. */
export const LOCATIONS_SHARE = STREAM_FACTS.locations.reads.budget.share;

/** Each stream's share of the limit: the floor it keeps (a fraction, or the setting that gives it). */
export function budgetShares(settings: ShareSettings): Record<BudgetStream, number> {
  return Object.fromEntries(
    BUDGET_STREAMS.map((stream) => {
      const share = budgetOf(stream).share;
      return [stream, typeof share === 'number' ? share : settings[share]];
    }),
  ) as Record<BudgetStream, number>;
}

export interface StreamClaim {
  stream: BudgetStream;
  /** Fraction of the limit the stream keeps while it has work, whoever else is busy. */
  share: number;
  /** Requests spent over the last interval (the ledger). */
  spent: number;
  /**
   * Requests the stream wants this interval. Absent: what it spent over the last one (a stream
   * that does not plan its requests, like the feed, is expected to go on as it went).
   */
  demand?: number;
}

export interface StreamAllowance {
  stream: BudgetStream;
  share: number;
  /** The share in whole requests of this interval's limit (scaled down when the shares sum above 1). */
  floor: number;
  spent: number;
  demand: number;
  /** Requests the stream may spend this interval. */
  allowance: number;
}

const whole = (n: number) => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/**
 * Divides `limit` requests between the claims, given in priority order:
 * 1. every stream with work is first given its floor (up to its demand): a lower-priority stream
 *    keeps its share whatever the higher ones want;
 * 2. what is left goes to the unmet demand in priority order;
 * 3. what is still left (nobody wants it) goes to the streams with work, in proportion to their
 *    demand: with everyone else idle, a stream with work may use the whole limit.
 * Allowances never sum above the limit; shares that sum above 1 are scaled down to fit.
 */
export function allocateBudget(input: { limit: number; claims: readonly StreamClaim[] }): StreamAllowance[] {
  const limit = whole(input.limit);
  const shareSum = input.claims.reduce((sum, c) => sum + Math.max(0, c.share), 0);
  const scale = shareSum > 1 ? 1 / shareSum : 1;
  const rows = input.claims.map((claim) => {
    const spent = whole(claim.spent);
    const demand = whole(claim.demand ?? spent);
    const floor = Math.min(limit, whole(Math.max(0, claim.share) * scale * limit));
    return { stream: claim.stream, share: claim.share, floor, spent, demand, allowance: 0 };
  });
  let left = limit;
  for (const row of rows) {
    row.allowance = Math.min(row.floor, row.demand, left);
    left -= row.allowance;
  }
  for (const row of rows) {
    const more = Math.min(row.demand - row.allowance, left);
    row.allowance += more;
    left -= more;
  }
  const working = rows.filter((row) => row.demand > 0);
  const totalDemand = working.reduce((sum, row) => sum + row.demand, 0);
  if (left > 0 && totalDemand > 0) {
    const spare = left;
    for (const row of working) {
      const more = Math.min(left, Math.floor((spare * row.demand) / totalDemand));
      row.allowance += more;
      left -= more;
    }
    // Rounding leftovers: to the streams with work, highest priority first.
    for (const row of working) {
      if (left <= 0) break;
      row.allowance++;
      left--;
    }
  }
  return rows;
}

/** The allowance of one stream in an allocation (0 when it is not in it). */
export function allowanceOf(allocation: readonly StreamAllowance[], stream: BudgetStream): number {
  return allocation.find((row) => row.stream === stream)?.allowance ?? 0;
}
