import { pollBudgetPerPass } from './intent-poll-schedule.js';

/**
 * The pacing of a payment intents pass (docs/payment-intents.md, "One pass"): how long one tick
 * plans for, what it may spend, and when the next tick starts. Pure: the caller reads the clock.
 */
export interface TickPacing {
  /** Keep ticking this long (the worker's time to its next scheduled pass); 0: one tick. */
  slotMs: number;
  /** Shortest time between two ticks of one pass. */
  tickEveryMs: number;
  /** PAYMENT_INTENTS_EVERY: what a single tick plans for. */
  passEveryMs: number;
  rateLimitRps: number;
  /** INTENT_POLL_SHARE of the shared rate limit. */
  pollShare: number;
}

/** A single tick plans for the whole schedule interval; repeated ticks for one tick interval. */
export function tickIntervalMs(pacing: TickPacing): number {
  return pacing.slotMs > 0 ? pacing.tickEveryMs : pacing.passEveryMs;
}

/** Requests one tick may spend: the poll share of the rate limit over its interval (at least 1). */
export function tickBudget(pacing: TickPacing): number {
  return pollBudgetPerPass({
    rateLimitRps: pacing.rateLimitRps,
    pollShare: pacing.pollShare,
    passIntervalMs: tickIntervalMs(pacing),
  });
}

/**
 * When the next tick starts, or null when it would start past the slot. A tick that spent more than
 * its interval's allowance (a sweep that needed many pages) pushes the next one out, so the average
 * stays within the allowance (`budget` over the tick interval; the poll share without one) however
 * many pages a tick needed.
 */
export function nextTickStartMs(
  pacing: TickPacing,
  tick: { passStartedMs: number; tickStartedMs: number; requests: number; budget?: number },
): number | null {
  const perSecond =
    tick.budget === undefined
      ? pacing.rateLimitRps * pacing.pollShare
      : Math.max(pacing.rateLimitRps * pacing.pollShare, tick.budget / (tickIntervalMs(pacing) / 1000));
  const next = tick.tickStartedMs + Math.max(pacing.tickEveryMs, (tick.requests / perSecond) * 1000);
  return next >= tick.passStartedMs + pacing.slotMs ? null : next;
}

/** Whether this tick reads the whole list: the first time, then every `fullSweepEveryMs`. */
export function fullSweepDue(lastFullSweepAt: Date | null, now: Date, fullSweepEveryMs: number): boolean {
  return lastFullSweepAt === null || now.getTime() - lastFullSweepAt.getTime() >= fullSweepEveryMs;
}

/** How many due open intents a tick looks up to plan with: far more than it can poll by id. */
export function dueLookupLimit(budget: number): number {
  return Math.max(1_000, budget * 50);
}

/** Share of the intents' requests kept from the list round for by-id reads of the full form. */
export const DEFAULT_FULL_FORM_SHARE = 0.1;

/**
 * The by-id reads a tick keeps from the list round (docs/payment-intents.md, "One pass"): a credit
 * of `share` of each tick's budget, carried from tick to tick (a tick of 5 requests earns half a
 * read), spent whole when the tick reserves it. A tick with no full form to read (`demand` false)
 * reserves nothing and carries at most one read. The round gets the rest (at least one page);
 * payments the round finds are read first from the reserve, then backfill, newest first. Pure.
 */
export function fullFormReserve(
  credit: number,
  input: { budget: number; share: number; demand: boolean },
): { reserve: number; pageBudget: number; credit: number } {
  const budget = Math.max(1, Math.floor(input.budget));
  const earned = Math.min(budget, Math.max(0, credit) + budget * Math.max(0, input.share));
  if (!input.demand) return { reserve: 0, pageBudget: budget, credit: Math.min(1, earned) };
  const reserve = Math.min(Math.floor(earned), budget - 1);
  return { reserve, pageBudget: budget - reserve, credit: earned - reserve };
}

/** A pass's status from its counts: failed when every request failed, partial when some did. */
export function intentPassStatus(totals: {
  requests: number;
  errors: number;
}): 'succeeded' | 'partial' | 'failed' {
  if (totals.errors === 0) return 'succeeded';
  return totals.requests > totals.errors ? 'partial' : 'failed';
}
