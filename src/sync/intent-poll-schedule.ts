/**
 * When to look at an open payment intent again, and what a pass may spend. Pure: no clock, no I/O.
 * The cost model is in docs/payment-intents.md.
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

/** An open intent whose poll is due and that no list round reaches: polled by id. */
export interface DueIntent {
  id: string;
  /** Estimated 0-based position in the newest-first intent list; MAX_SAFE_INTEGER when no round reaches it. */
  rank: number;
  createdAt: Date | null;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
