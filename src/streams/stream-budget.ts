import type { Config } from '../config/config.js';
import { createSpendLedger, type SpendLedger, type StreamSpend } from '../api/spend-ledger.js';
import {
  BUDGET_STREAMS,
  allocateBudget,
  budgetShares,
  type BudgetStream,
  type StreamAllowance,
} from '../sync/budget-allocation.js';
import type { StreamDeps } from './stream.js';

// A stream's allowance for its next interval from the one budget (docs/rate-limit.md, "One
// budget"): the spend of every stream over the last interval, read from the shared ledger, is each
// stream's expected demand; the asking stream brings its own (what it has due).

/** The shortest window the spend is measured over: a 2 s intents tick looks at the last minute. */
const MIN_WINDOW_MS = 60_000;

export function spendLedgerOf(deps: Pick<StreamDeps<unknown>, 'redis' | 'config' | 'clock'>): SpendLedger {
  return createSpendLedger({
    redis: deps.redis,
    prefix: deps.config.redisPrefix,
    nowMs: () => deps.clock.now().getTime(),
  });
}

/**
 * The allocation of `rateLimitRps x intervalMs` requests, each stream's demand being its spend over
 * the last interval (measured over at least a minute and scaled to the interval), except for the
 * streams in `demands`, which say what they want.
 */
export function allocationFor(input: {
  config: Pick<Config, 'api' | 'intents' | 'members'>;
  intervalMs: number;
  spend: StreamSpend;
  /** The time `spend` was measured over (the ledger's span). */
  windowMs: number;
  demands?: Partial<Record<BudgetStream, number>>;
}): StreamAllowance[] {
  const shares = budgetShares({
    intentPollShare: input.config.intents.pollShare,
    memberSyncShare: input.config.members.syncShare,
  });
  const scale = input.intervalMs / input.windowMs;
  return allocateBudget({
    limit: input.config.api.rateLimitRps * (input.intervalMs / 1000),
    claims: BUDGET_STREAMS.map((stream) => {
      const demand = input.demands?.[stream];
      return {
        stream,
        share: shares[stream],
        spent: Math.round(input.spend[stream] * scale),
        ...(demand === undefined ? {} : { demand }),
      };
    }),
  });
}

/** What `stream` may spend over its next `intervalMs`, with the whole allocation it came from. */
export async function streamAllowance(
  deps: Pick<StreamDeps<unknown>, 'redis' | 'config' | 'clock'>,
  stream: BudgetStream,
  options: { intervalMs: number; demand: number; ledger?: SpendLedger },
): Promise<{ allowance: number; allocation: StreamAllowance[] }> {
  const { spent, spanMs } = await (options.ledger ?? spendLedgerOf(deps)).spentOver(
    Math.max(MIN_WINDOW_MS, options.intervalMs),
  );
  const allocation = allocationFor({
    config: deps.config,
    intervalMs: options.intervalMs,
    spend: spent,
    windowMs: spanMs,
    demands: { [stream]: options.demand },
  });
  return { allowance: allocation.find((row) => row.stream === stream)?.allowance ?? 0, allocation };
}
