/**
 * Tuning of the payment intents pass that is no setting (docs/payment-intents.md, "Tuning" cites
 * these values): the one place they are written. A test or the bench may override any of them per
 * pass (`PaymentIntentsPassOptions`); the planners in `src/sync/intent-*-plan.ts` take them as inputs.
 */
export interface IntentPassTuning {
  /** Read the whole list this often (refunds of old intents, late arrivals, the first import). */
  fullSweepEveryMs: number;
  /** Discovery re-reads this far below the newest intent already processed (clock skew, late visibility). */
  discoveryLookbackMs: number;
  /** Asked for on sweeps; the server's `pagination.page_size` is what counts. */
  sweepPageSize: number;
  /** By-id fetches in flight at once (the shared limiter paces them); `resync` uses it too. */
  concurrency: number;
  /**
   * Keep ticking this long while intents are open (the worker passes the time to its next scheduled
   * pass). 0: one tick, as `run payment_intents` wants.
   */
  slotMs: number;
  /** The interval a tick's budget is counted over, and the shortest gap between ticks that read no round. */
  tickEveryMs: number;
  /**
   * Shortest time between two ticks that read a list round: rounds follow each other at the
   * allowance's pace, not once per `tickEveryMs`; this only bounds the ticks' own overhead.
   */
  minRoundTickGapMs: number;
  /**
   * A round covers the newest rows the share reads in this many seconds (maxRoundRows); an open
   * intent below them is polled by id on its schedule instead.
   */
  roundReachSeconds: number;
  /** Share of the intents' requests kept from the list round for by-id reads of the full form. */
  fullFormShare: number;
  /** Share of a ticking pass's list pages that a full round gets beside the round past the open intents. */
  fullRoundShare: number;
  /** List pages requested ahead of the one being applied (the limiter still paces each request). */
  prefetchPages: number;
  /** A due look that shows nothing new is written at most this often (it advances the poll schedule). */
  unchangedLookWriteEveryMs: number;
}

export const INTENT_PASS_TUNING: Readonly<IntentPassTuning> = {
  fullSweepEveryMs: 600_000,
  discoveryLookbackMs: 120_000,
  sweepPageSize: 500,
  concurrency: 8,
  slotMs: 0,
  tickEveryMs: 1_000,
  minRoundTickGapMs: 200,
  roundReachSeconds: 60,
  fullFormShare: 0.1,
  fullRoundShare: 0.2,
  prefetchPages: 2,
  unchangedLookWriteEveryMs: 60_000,
};
