import { planIntentPolling, type DueIntent } from './intent-poll-schedule.js';

/**
 * How far one list sweep of payment intents reads (docs/payment-intents.md, "One pass"), and where the
 * discovery horizon moves after it. Pure.
 */
export interface SweepPlanInput {
  due: readonly DueIntent[];
  /** Rows per list page, as the server last applied it. */
  pageSize: number;
  budget: number;
  fullSweep: boolean;
  /** The oldest open intent and the rows a newest-first sweep reads to pass it; null when none is open. */
  reach: { oldestCreatedAt: Date; depth: number } | null;
  /** The discovery horizon: newest created_at already processed. */
  newestCreatedAt: Date | null;
  discoveryLookbackMs: number;
}

export interface SweepPlan {
  /** The sweep may stop once a newest-first page reaches below this; null: read to the end or maxPages. */
  stopBelow: Date | null;
  maxPages: number;
}

/**
 * Down to the discovery horizon (minus the look-back), past every open intent when the budget affords
 * it (so a payment anywhere among them is seen this tick), else past the due intents planIntentPolling
 * chose to cover; a full sweep reads the whole list.
 */
export function planIntentSweep(input: SweepPlanInput): SweepPlan {
  const { reach, pageSize, budget } = input;
  const pagesForAllOpen = reach === null ? 1 : Math.floor(reach.depth / pageSize) + 1;
  const coverAllOpen = reach !== null && pagesForAllOpen <= budget;
  const plan = planIntentPolling({
    due: input.due,
    pageSize,
    minSweepPages: coverAllOpen ? pagesForAllOpen : 1,
    budget,
  });
  if (input.fullSweep) return { stopBelow: null, maxPages: Number.POSITIVE_INFINITY };
  const horizon =
    input.newestCreatedAt === null
      ? null
      : new Date(input.newestCreatedAt.getTime() - input.discoveryLookbackMs);
  return {
    stopBelow: olderOf(
      olderOf(horizon, plan.sweepCoversCreatedAt),
      coverAllOpen ? reach.oldestCreatedAt : null,
    ),
    maxPages: Math.max(plan.sweepPages, budget),
  };
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

/** Whether a (not full) sweep has read far enough: newest first, and past `stopBelow`. */
export function sweepReachedStop(order: ListOrder, stopBelow: Date | null): boolean {
  return (
    order.newestFirst &&
    stopBelow !== null &&
    order.lastCreatedAt !== undefined &&
    order.lastCreatedAt < stopBelow.getTime()
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

function olderOf(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() <= b.getTime() ? a : b;
}
