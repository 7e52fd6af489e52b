import { exponentialBackoffMs } from '../sync/backoff.js';
/** How hard we try to deliver one alert. Pure. */
export interface AlertDeliveryPolicy {
  /** Delay after the first failed attempt; doubles per attempt. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Give up (set failed_at) after this many attempts… */
  maxAttempts: number;
  /** …or once the alert is this old, whichever comes first. */
  maxAgeMs: number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** A claimed alert is not handed to another worker for this long (covers a crash mid-send). */
  leaseMs: number;
  /**
   * POSTs in flight at once in one process, every delivery path together (AlertDeliverySlots,
   * built from the default policy); a pass given a lower one runs that many deliveries.
   */
  concurrency: number;
}

export const DEFAULT_ALERT_DELIVERY_POLICY: AlertDeliveryPolicy = {
  baseDelayMs: 5_000,
  maxDelayMs: 3_600_000,
  maxAttempts: 25, // 24 waits: 5 s doubling to 42 min (1 h 25 min), then 14 × 1 h: about 15.4 h
  maxAgeMs: 3 * 86_400_000,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  concurrency: 8,
};

/** Exponential backoff: base, 2×base, 4×base, … capped. `attempts` counts the attempt that just failed. */
export function retryDelayMs(
  attempts: number,
  policy: AlertDeliveryPolicy = DEFAULT_ALERT_DELIVERY_POLICY,
): number {
  return exponentialBackoffMs(attempts, policy.baseDelayMs, policy.maxDelayMs);
}

/**
 * After a failed attempt: retry after a delay (added to Postgres's now() where it is stored), or
 * give up. `now` is the pipeline's clock (Postgres's), as `createdAt` was.
 */
export function afterFailedAttempt(
  input: { attempts: number; createdAt: Date; now: Date },
  policy: AlertDeliveryPolicy = DEFAULT_ALERT_DELIVERY_POLICY,
): { giveUp: true } | { giveUp: false; retryInMs: number } {
  const ageMs = input.now.getTime() - input.createdAt.getTime();
  if (input.attempts >= policy.maxAttempts || ageMs >= policy.maxAgeMs) return { giveUp: true };
  return { giveUp: false, retryInMs: retryDelayMs(input.attempts, policy) };
}
