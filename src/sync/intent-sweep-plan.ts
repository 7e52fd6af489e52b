/**
 * How the list of payment intents is read (docs/payment-intents.md, "One pass"), and where the
 * discovery horizon moves after it. Pure.
 *
 * A **round** is one read of the newest-first list from page 0 down past every open intent (and the
 * discovery horizon), or to the end on a full round. It spans as many ticks as it needs: each tick
 * reads the next pages its budget affords and the next tick continues where it stopped, so every open
 * intent is seen once per round (about ⌈pages⌉ / allowance seconds) however many are open. Intents
 * arrive at the top of the list, so a page number read later shows the same or older intents: a round
 * that continues can read an intent twice, never skip one.
 */
export interface ListRound {
  /** The next page to read (zero-indexed). */
  nextPage: number;
  /** A full round reads to the end of the list (refunds of old intents, late arrivals). */
  full: boolean;
  startedAt: Date;
  /** Newest created_at the round has read (its page 0): the discovery horizon once it completes. */
  newestSeen: Date | null;
  /** The horizon may not pass below this: a first sight the round could not record. */
  horizonCap: Date | null;
  /** Whether any request of the round failed (a full round with errors does not count as one). */
  failed: boolean;
  /** The payee filter the round reads with; a round read with another filter starts over. */
  payee: string | null;
}

export interface SweepPlanInput {
  /** The round in progress, if any. */
  round: ListRound | null;
  /** The payee filter this tick reads with. */
  payee: string | null;
  now: Date;
  /** Start a full round when a new round starts. */
  fullSweepDue: boolean;
  /** Rows per list page, as the server last applied it. */
  pageSize: number;
  /** List pages this tick may read. */
  pageBudget: number;
  /** The oldest open intent and the rows a newest-first read passes to reach it; null when none is open. */
  reach: { oldestCreatedAt: Date; depth: number; oldestIds?: readonly string[] | null } | null;
  /** The discovery horizon: newest created_at already processed. */
  newestCreatedAt: Date | null;
  discoveryLookbackMs: number;
}

export interface SweepPlan {
  /** The round this tick continues (or starts). */
  round: ListRound;
  /** The round may stop once a newest-first page reaches below this; null: read to the end. */
  stopBelow: Date | null;
  maxPages: number;
  /**
   * The last page worth requesting ahead of the one being applied: the page the oldest open intent
   * (or the horizon) is expected on. Pages past it are read only when the stop was not reached by then,
   * so prefetching never spends a request past the end of a round.
   */
  prefetchThrough: number;
}

/**
 * Continues the round in progress (a new one, full when due, when none is or the payee filter
 * changed): this tick reads from its next page, at most `pageBudget` pages, and the round completes
 * once it is past every open intent and the discovery horizon minus the look-back.
 */
export function planIntentSweep(input: SweepPlanInput): SweepPlan {
  const { reach } = input;
  const pageSize = Math.max(1, Math.floor(input.pageSize));
  const continuing = input.round !== null && input.round.payee === input.payee;
  const round: ListRound =
    continuing && input.round !== null
      ? input.round
      : {
          nextPage: 0,
          full: input.fullSweepDue,
          startedAt: input.now,
          newestSeen: null,
          horizonCap: null,
          failed: false,
          payee: input.payee,
        };
  const maxPages = Math.max(1, Math.floor(input.pageBudget));
  if (round.full) return { round, stopBelow: null, maxPages, prefetchThrough: round.nextPage + maxPages - 1 };
  const horizon =
    input.newestCreatedAt === null
      ? null
      : new Date(input.newestCreatedAt.getTime() - input.discoveryLookbackMs);
  // Without a horizon (the first pass) and nothing open, the budget bounds the read.
  const stopBelow = reach === null ? horizon : olderOf(horizon, reach.oldestCreatedAt);
  const lastPage = reach === null ? 0 : Math.floor(reach.depth / pageSize);
  return {
    round,
    stopBelow,
    maxPages,
    prefetchThrough: Math.min(round.nextPage + maxPages - 1, Math.max(round.nextPage, lastPage)),
  };
}

/**
 * The round after a tick read from it: null once it completed (past its stop, or the end of the
 * list), else continued from the page after the last one applied. A first sight that could not be
 * recorded caps the horizon the round may set.
 */
export function advanceRound(
  round: ListRound,
  tick: {
    nextPage: number;
    completed: boolean;
    newestSeen: Date | null;
    failedFirstSights: readonly Date[];
    failed: boolean;
  },
): ListRound | null {
  if (tick.completed) return null;
  let cap = round.horizonCap?.getTime() ?? Number.POSITIVE_INFINITY;
  for (const createdAt of tick.failedFirstSights) cap = Math.min(cap, createdAt.getTime() - 1);
  return {
    ...round,
    nextPage: tick.nextPage,
    newestSeen: newerOf(round.newestSeen, tick.newestSeen),
    horizonCap: Number.isFinite(cap) ? new Date(cap) : null,
    failed: round.failed || tick.failed,
  };
}

/**
 * How a tick's list pages are split between the round past the open intents and a full round (the
 * whole list, every `fullSweepEveryMs`), which runs beside it rather than instead of it: a full round
 * of a long list at page 50 takes minutes, and payments must not wait for it. While the pass ticks,
 * the full round gets `fullRoundShare` of the pages (the pass's tuning) (none when the tick has a single page); a pass
 * of one tick (`run`) gives it what the open round leaves (`full` is then an upper bound, the caller
 * subtracts what was read). Before the first discovery horizon exists, the full round reads alone (it
 * discovers everything). Pure.
 */
export function splitListPages(input: {
  pageBudget: number;
  fullRound: boolean;
  hasHorizon: boolean;
  ticking: boolean;
  /** Share of the pages a full round gets while the pass ticks. */
  fullRoundShare: number;
}): { open: number; full: number } {
  const pages = Math.max(1, Math.floor(input.pageBudget));
  if (!input.fullRound) return { open: pages, full: 0 };
  if (!input.hasHorizon) return { open: 0, full: pages };
  if (!input.ticking) return { open: pages, full: pages };
  if (pages < 2) return { open: pages, full: 0 };
  const full = Math.min(pages - 1, Math.max(1, Math.floor(pages * Math.max(0, input.fullRoundShare))));
  return { open: pages - full, full };
}

/** What the sweep has seen of the list's order so far. */
export interface ListOrder {
  /** False once a record is newer than the one before it: then no early stop is safe. */
  newestFirst: boolean;
  /** created_at of the last dated record read. */
  lastCreatedAt: number | undefined;
  newestSeen: Date | null;
}

export const LIST_ORDER_START: ListOrder = { newestFirst: true, lastCreatedAt: undefined, newestSeen: null };

/** Follows one page's records (in list order); records without created_at tell nothing. */
export function followListOrder(
  order: ListOrder,
  records: readonly { createdAt?: Date | undefined }[],
): ListOrder {
  let { newestFirst, lastCreatedAt, newestSeen } = order;
  for (const record of records) {
    const created = record.createdAt?.getTime();
    if (created === undefined) continue;
    if (lastCreatedAt !== undefined && created > lastCreatedAt) newestFirst = false;
    lastCreatedAt = created;
    if (newestSeen === null || created > newestSeen.getTime()) newestSeen = record.createdAt ?? null;
  }
  return { newestFirst, lastCreatedAt, newestSeen };
}

/**
 * Whether a (not full) round has read far enough: newest first, and past `stopBelow`; or, when the
 * stop is the oldest open intent itself (`oldest`), down to its created_at with every open intent
 * created at that moment seen (so a page that ends on the oldest open intent ends the round, instead of
 * one more page being read to find a record below it).
 */
export function sweepReachedStop(
  order: ListOrder,
  stopBelow: Date | null,
  oldest?: { createdAt: Date; ids: readonly string[] | null; seen: ReadonlySet<string> },
): boolean {
  if (!order.newestFirst || stopBelow === null || order.lastCreatedAt === undefined) return false;
  if (order.lastCreatedAt < stopBelow.getTime()) return true;
  return (
    oldest !== undefined &&
    oldest.ids !== null &&
    oldest.createdAt.getTime() === stopBelow.getTime() &&
    order.lastCreatedAt <= stopBelow.getTime() &&
    oldest.ids.every((id) => oldest.seen.has(id))
  );
}

/**
 * The discovery horizon moves only when the sweep read down to the old one (or the end of the list),
 * and never past a first sight that could not be recorded, so nothing new is skipped by the next pass.
 */
export function nextHorizon(input: {
  newestSeen: Date | null;
  reachedHorizon: boolean;
  failedFirstSights: readonly Date[];
}): { newestCreatedAt?: Date | null } {
  if (!input.reachedHorizon || input.newestSeen === null) return {};
  let horizon = input.newestSeen.getTime();
  for (const createdAt of input.failedFirstSights) horizon = Math.min(horizon, createdAt.getTime() - 1);
  return { newestCreatedAt: new Date(horizon) };
}

function newerOf(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() >= b.getTime() ? a : b;
}

function olderOf(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() <= b.getTime() ? a : b;
}
