/**
 * When to look at an open payment intent again, and how to spend a pass's request budget between
 * list sweeps and per-id polls. Pure: no clock, no I/O. The cost model is in docs/payment-intents.md.
 */

export interface PollSchedulePolicy {
  /** Shortest interval between two looks at one intent (young intents). */
  minIntervalMs: number;
  /** Longest interval (old intents). */
  maxIntervalMs: number;
  /** Interval as a fraction of the intent's age: backs off as the intent gets older. */
  ageFactor: number;
  /** Keep watching this long after `expires_at` to catch the final state, then stop. */
  expiryGraceMs: number;
  /** Stop watching an intent without `expires_at` after this age. */
  maxWatchMs: number;
}

export const DEFAULT_POLL_SCHEDULE: PollSchedulePolicy = {
  minIntervalMs: 2_000,
  maxIntervalMs: 300_000,
  ageFactor: 0.05,
  expiryGraceMs: 600_000,
  maxWatchMs: 30 * 86_400_000,
};

export interface PollScheduleInput {
  now: Date;
  /** The intent's `created_at`; undefined when not known (then the first sight stands in). */
  createdAt: Date | undefined;
  /** `expires_at`; null when the intent never expires, undefined when not fetched yet. */
  expiresAt: Date | null | undefined;
  /** Polls so far, this one included. */
  pollCount: number;
  status: string;
}

/**
 * The next time to look at an intent, or null to stop (terminal status, expired past the grace
 * period, or watched for `maxWatchMs`). Young intents every `minIntervalMs`, then `ageFactor` of
 * their age up to `maxIntervalMs`. The poll count is a floor on the age, so a row whose created_at
 * is wrong (clock skew, in the future) still backs off instead of being polled at the floor forever.
 */
export function nextPollAt(
  input: PollScheduleInput,
  policy: PollSchedulePolicy = DEFAULT_POLL_SCHEDULE,
): Date | null {
  if (input.status !== 'pending') return null;
  const now = input.now.getTime();
  const createdAt = input.createdAt?.getTime() ?? now;
  const ageMs = Math.max(now - createdAt, Math.max(0, input.pollCount) * policy.minIntervalMs);
  if (ageMs >= policy.maxWatchMs) return null;
  const interval = clamp(ageMs * policy.ageFactor, policy.minIntervalMs, policy.maxIntervalMs);
  let next = now + interval;
  const expiresAt = input.expiresAt?.getTime();
  if (expiresAt !== undefined) {
    const giveUpAt = expiresAt + policy.expiryGraceMs;
    if (now >= giveUpAt) return null;
    // The status read just after expiry is the one that tells how the intent ended: look right then.
    if (now < expiresAt && next > expiresAt) next = expiresAt + policy.minIntervalMs;
    if (now >= expiresAt)
      next = now + Math.min(interval, Math.max(policy.minIntervalMs, policy.expiryGraceMs / 4));
    next = Math.min(next, giveUpAt);
  }
  return new Date(next);
}

/**
 * Requests a pass may spend (at least 1): the intents' allowance of the one budget over the pass
 * interval when the caller has it (src/streams/stream-budget.ts, docs/rate-limit.md "One budget"),
 * else `pollShare` of the shared rate limit over that interval.
 */
export function pollBudgetPerPass(input: {
  rateLimitRps: number;
  pollShare: number;
  passIntervalMs: number;
  /** The intents' allowance over `passIntervalMs` (budget-allocation.ts); replaces the share. */
  allowance?: number | undefined;
}): number {
  if (input.allowance !== undefined) return Math.max(1, Math.floor(input.allowance));
  return Math.max(1, Math.floor(input.rateLimitRps * input.pollShare * (input.passIntervalMs / 1000)));
}

export interface DueIntent {
  id: string;
  /** Estimated 0-based position in the newest-first intent list (what a sweep has to read past). */
  rank: number;
  createdAt: Date | null;
}

export interface PollPlanInput {
  /** Open intents whose next poll is due, most overdue first. */
  due: readonly DueIntent[];
  /** Rows per list page (as the server last reported it). */
  pageSize: number;
  /** Pages the sweep reads anyway (discovery of new intents): at least 1. */
  minSweepPages: number;
  /** Requests this pass may spend on sweep pages and per-id polls together. */
  budget: number;
}

export interface PollPlan {
  /** Pages of the newest-first list the sweep is expected to read. */
  sweepPages: number;
  /**
   * Sweep until it has read past this created_at (the oldest due intent it covers); null when the
   * sweep only does discovery.
   */
  sweepCoversCreatedAt: Date | null;
  /** Due intents the sweep is expected to cover. */
  coveredIds: string[];
  /** Due intents to fetch by id, within the budget, most overdue first. */
  pollIds: string[];
  /** Due intents left for a later pass because the budget ran out. */
  deferredIds: string[];
}

/**
 * Sweep vs per-id polls. Covering the k shallowest due intents with the sweep costs the pages down to
 * the k-th one's rank; every due intent left uncovered costs one request. Chooses the k with the lowest
 * total (ties to the deeper sweep: it also refreshes intents that are not due yet), keeping the sweep
 * within the budget, then spends what is left on per-id polls. The list carries `status`, so a page of
 * `pageSize` intents costs what one per-id poll costs.
 */
export function planIntentPolling(input: PollPlanInput): PollPlan {
  const pageSize = Math.max(1, Math.floor(input.pageSize));
  const minPages = Math.max(1, Math.floor(input.minSweepPages));
  const budget = Math.max(minPages, Math.floor(input.budget));
  const byRank = [...input.due].sort((a, b) => a.rank - b.rank);
  const pagesToCover = (k: number): number => {
    const deepest = byRank[k - 1];
    return deepest === undefined
      ? minPages
      : Math.max(minPages, Math.floor(Math.max(0, deepest.rank) / pageSize) + 1);
  };

  let bestK = 0;
  let bestCost = Number.POSITIVE_INFINITY;
  for (let k = 0; k <= byRank.length; k++) {
    const pages = pagesToCover(k);
    if (pages > budget) break; // ranks are sorted: deeper sweeps only cost more
    const cost = pages + (byRank.length - k);
    if (cost <= bestCost) {
      bestCost = cost;
      bestK = k;
    }
  }

  const sweepPages = pagesToCover(bestK);
  const covered = new Set(byRank.slice(0, bestK).map((intent) => intent.id));
  const uncovered = input.due.filter((intent) => !covered.has(intent.id));
  const remaining = Math.max(0, budget - sweepPages);
  const deepest = byRank[bestK - 1];
  return {
    sweepPages,
    sweepCoversCreatedAt: deepest === undefined ? null : oldestCreatedAt(byRank.slice(0, bestK)),
    coveredIds: [...covered],
    pollIds: uncovered.slice(0, remaining).map((intent) => intent.id),
    deferredIds: uncovered.slice(remaining).map((intent) => intent.id),
  };
}

function oldestCreatedAt(intents: readonly DueIntent[]): Date | null {
  let oldest: number | null = null;
  for (const intent of intents) {
    // An intent without created_at cannot be located by a sweep: cover it by reading everything.
    if (intent.createdAt === null) return new Date(0);
    const time = intent.createdAt.getTime();
    if (oldest === null || time < oldest) oldest = time;
  }
  return oldest === null ? null : new Date(oldest);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
