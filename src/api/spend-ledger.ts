import type { RedisClient } from '../redis/connection.js';
import { BUDGET_STREAMS, isBudgetStream, type BudgetStream } from '../sync/budget-allocation.js';

// The spend ledger (docs/rate-limit.md, "One budget"): every request a process sends is counted
// against its stream in Redis, where every process of every host adds to the same counters, so a
// stream's allowance (src/sync/budget-allocation.ts) is computed from what all of them spent. One
// hash per minute of the pipeline's clock (Postgres's, so every host files a request under the
// same minute), a field per stream, incremented where a request's rate-limit slot is claimed (the
// requester and the token endpoint): the feed, the intents' by-id reads that raise paid alerts,
// retries and token refreshes all count. Each hash lives two hours: `status` reads the last one.

const MINUTE_MS = 60_000;
/** Long enough for "the last hour" to be read whole, however late a reader comes in the minute. */
const BUCKET_TTL_MS = 2 * 3_600_000 + MINUTE_MS;
/** The longest window a reader may ask for. */
export const LEDGER_WINDOW_MAX_MS = 2 * 3_600_000;

export type StreamSpend = Record<BudgetStream, number>;

/** Where one request is counted: the current minute's hash, the stream's field, the hash's TTL. */
export interface LedgerCount {
  key: string;
  field: BudgetStream;
  ttlMs: number;
}

export interface SpendLedger {
  /** Counts `requests` (default 1) against `stream` in the current minute. */
  record(stream: BudgetStream, requests?: number): Promise<void>;
  /**
   * Where a request of `stream` sent now is counted, for the rate limiter's claim script to count
   * it in the same round trip as its slot (shared-rate-limiter.ts): one Redis command a request.
   */
  countOf(stream: BudgetStream): LedgerCount;
  /**
   * Requests per stream in the minutes of the pipeline's clock that the last `windowMs` touches:
   * from the minute `windowMs` ago to the current one (partly gone). `spanMs` is the time those
   * minutes cover up to now (between `windowMs` and `windowMs` + 1 min): what to scale by.
   */
  spentOver(windowMs: number): Promise<{ spent: StreamSpend; spanMs: number }>;
}

export function emptySpend(): StreamSpend {
  return Object.fromEntries(BUDGET_STREAMS.map((stream) => [stream, 0])) as StreamSpend;
}

export function createSpendLedger(options: {
  redis: RedisClient;
  /** config.redisPrefix (hash-tagged on a Cluster, so a window's keys share one slot). */
  prefix: string;
  /** The pipeline's clock. */
  nowMs?: () => number;
}): SpendLedger {
  const nowMs = options.nowMs ?? Date.now;
  const keyOf = (minute: number) => `${options.prefix}:budget:spent:${minute}`;
  return {
    countOf: (stream) => ({
      key: keyOf(Math.floor(nowMs() / MINUTE_MS)),
      field: stream,
      ttlMs: BUCKET_TTL_MS,
    }),
    async record(stream, requests = 1) {
      if (!(requests > 0)) return;
      const key = keyOf(Math.floor(nowMs() / MINUTE_MS));
      await options.redis.multi().hincrby(key, stream, requests).pexpire(key, BUCKET_TTL_MS).exec();
    },
    async spentOver(windowMs) {
      const now = nowMs();
      const current = Math.floor(now / MINUTE_MS);
      const first = Math.floor((now - Math.max(0, Math.min(windowMs, LEDGER_WINDOW_MAX_MS))) / MINUTE_MS);
      const pipeline = options.redis.pipeline();
      for (let minute = first; minute <= current; minute++) pipeline.hgetall(keyOf(minute));
      const answers = (await pipeline.exec()) ?? [];
      const spend = emptySpend();
      for (const [error, fields] of answers) {
        if (error) throw error;
        for (const [stream, count] of Object.entries((fields ?? {}) as Record<string, string>))
          if (isBudgetStream(stream)) spend[stream] += Number(count) || 0;
      }
      return { spent: spend, spanMs: Math.max(1, now - first * MINUTE_MS) };
    },
  };
}
