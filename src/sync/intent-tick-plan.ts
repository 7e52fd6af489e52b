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
  /** Shortest time between two ticks that read a list round (the pass's `minRoundTickGapMs`). */
  minRoundTickGapMs: number;
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
 * When the next tick starts, or null when it would start past the slot: after the time the allowance
 * (`budget` over the tick interval; the poll share without one) takes to pay for the requests the
 * tick spent, so the average stays within it however many pages a tick read; at least `tickEveryMs`
 * apart, or `minRoundTickGapMs` while the ticks read a list round: rounds follow each other at the
 * allowance's pace (a round of p pages every p / A seconds: the latency bound), not once per
 * `tickEveryMs`.
 */
export function nextTickStartMs(
  pacing: TickPacing,
  tick: {
    passStartedMs: number;
    tickStartedMs: number;
    requests: number;
    budget?: number;
    /** The tick read list pages of a round: the next one follows as soon as the allowance has paid for it. */
    readRound?: boolean;
  },
): number | null {
  const perSecond = allowancePerSecond(pacing, tick.budget);
  const floor =
    tick.readRound === true ? Math.min(pacing.tickEveryMs, pacing.minRoundTickGapMs) : pacing.tickEveryMs;
  const next = tick.tickStartedMs + Math.max(floor, (tick.requests / perSecond) * 1000);
  return next >= tick.passStartedMs + pacing.slotMs ? null : next;
}

/**
 * Requests a tick adds to its budget because it started late: what the allowance paid for between
 * the start the pacing planned for it (nextTickStartMs) and its actual start, at most one tick
 * interval's worth. A tick that ran long (pages of 500 records on a loaded machine) delays the next;
 * without this the pass would spend less than its allowance by the time lost, and every round past
 * the open intents would take as much longer. The average never exceeds the allowance: the next tick
 * still waits until the allowance has paid for everything this one spent (nextTickStartMs). Pure.
 */
export function lateStartCatchUp(
  pacing: TickPacing,
  tick: { plannedStartMs: number | null; startedMs: number; budget?: number | undefined },
): number {
  if (tick.plannedStartMs === null) return 0;
  const lateMs = Math.min(tickIntervalMs(pacing), Math.max(0, tick.startedMs - tick.plannedStartMs));
  return Math.floor((allowancePerSecond(pacing, tick.budget) * lateMs) / 1000);
}

/**
 * The most a tick may spend (budget and catch-up together): what the allowance pays for up to the
 * end of the slot, at least one request; no cap for a pass of one tick. The next scheduled pass
 * starts at the slot's end with a tick of its own, so a last tick that spent a whole interval's
 * budget there would be paid for by time the next pass also spends: with the cap, what a pass spends
 * is paid for within its slot (one request over at most). Pure.
 */
export function slotRemainderCap(
  pacing: TickPacing,
  tick: { passStartedMs: number; tickStartedMs: number; budget?: number | undefined },
): number {
  if (pacing.slotMs <= 0) return Number.POSITIVE_INFINITY;
  const leftMs = Math.max(0, tick.passStartedMs + pacing.slotMs - tick.tickStartedMs);
  return Math.max(1, Math.floor((allowancePerSecond(pacing, tick.budget) * leftMs) / 1000));
}

/** Requests per second a tick's pacing keeps to: `budget` over the tick interval, never below the share. */
function allowancePerSecond(pacing: TickPacing, budget: number | undefined): number {
  const share = pacing.rateLimitRps * pacing.pollShare;
  return budget === undefined ? share : Math.max(share, budget / (tickIntervalMs(pacing) / 1000));
}

/** Whether this tick reads the whole list: the first time, then every `fullSweepEveryMs`. */
export function fullSweepDue(lastFullSweepAt: Date | null, now: Date, fullSweepEveryMs: number): boolean {
  return lastFullSweepAt === null || now.getTime() - lastFullSweepAt.getTime() >= fullSweepEveryMs;
}

/** How many due open intents a tick looks up to plan with: far more than it can poll by id. */
export function dueLookupLimit(budget: number): number {
  return Math.max(1_000, budget * 50);
}

/**
 * How many of the newest rows of the list a round covers: what the share (`shareRps`, requests/s)
 * reads in `reachSeconds` (the pass's `roundReachSeconds`). An open intent below them (one old intent
 * under a day of closed ones) would make every round read the whole list, so it is polled by id on
 * its schedule instead. Pure.
 */
export function maxRoundRows(input: { shareRps: number; pageSize: number; reachSeconds: number }): number {
  return (
    Math.max(1, Math.ceil(Math.max(0, input.shareRps) * Math.max(0, input.reachSeconds))) *
    Math.max(1, Math.floor(input.pageSize))
  );
}

/**
 * The by-id reads a tick keeps from the list round (docs/payment-intents.md, "One pass"): the
 * credit earned so far (earnFullFormCredit: `share` of every request spent), spent whole when the
 * tick reserves it. A tick with no full form to read (`demand` false) reserves nothing and carries at
 * most one read. The round gets the rest of the budget (at least one page). Pure.
 */
export function fullFormReserve(
  credit: number,
  input: { budget: number; demand: boolean },
): { reserve: number; pageBudget: number; credit: number } {
  const budget = Math.max(1, Math.floor(input.budget));
  const held = Math.max(0, credit);
  if (!input.demand) return { reserve: 0, pageBudget: budget, credit: Math.min(1, held) };
  const reserve = Math.min(Math.floor(held), budget - 1);
  return { reserve, pageBudget: budget - reserve, credit: held - reserve };
}

/** The credit after a tick that spent `requests`: `share` of them, at most one tick's budget held. */
export function earnFullFormCredit(
  credit: number,
  input: { requests: number; share: number; budget: number },
): number {
  return Math.min(Math.max(1, input.budget), credit + Math.max(0, input.requests) * Math.max(0, input.share));
}

/** A pass's status from its counts: failed when every request failed, partial when some did. */
export function intentPassStatus(totals: {
  requests: number;
  errors: number;
}): 'succeeded' | 'partial' | 'failed' {
  if (totals.errors === 0) return 'succeeded';
  return totals.requests > totals.errors ? 'partial' : 'failed';
}
