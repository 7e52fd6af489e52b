import type { DueIntent } from './intent-poll-schedule.js';

/**
 * The by-id fetches of one tick, in order, within what the sweep left of the budget
 * (docs/payment-intents.md, "One pass"): changes first (alerts wait on them; at least one even when
 * the sweep spent everything, so a change is never starved), then due open intents the sweep did not
 * reach, most overdue first, then rows only the list form has written (looked up with the limit
 * returned here). Changes that do not fit are deferred to the next tick. Pure.
 */
export interface FetchPlan<Change> {
  changes: Change[];
  deferredChanges: Change[];
  /** Due intents polled by id, most overdue first. */
  duePolls: string[];
  /** Due intents neither the sweep nor this tick's polls reached. */
  dueLeft: number;
  /** How many list-only rows may still be fetched for their full form. */
  backfillLimit: number;
}

export function planIntentFetches<Change>(input: {
  /** Changes the sweep could not settle, in the order it found them. */
  changes: readonly Change[];
  /** Due open intents, most overdue first. */
  due: readonly DueIntent[];
  /** Intents the sweep showed this tick: their status is fresh. */
  seen: ReadonlySet<string>;
  /** Requests left of the tick's budget. */
  remaining: number;
}): FetchPlan<Change> {
  const remaining = Math.max(0, input.remaining);
  const changes = input.changes.slice(0, Math.max(remaining, 1));
  // Due intents the sweep did not reach (the plan chose per-id polls for them, or new intents pushed
  // them deeper than estimated).
  const unreached = input.due.filter((due) => !input.seen.has(due.id));
  const duePolls = unreached.slice(0, Math.max(0, remaining - changes.length)).map((due) => due.id);
  return {
    changes,
    deferredChanges: input.changes.slice(changes.length),
    duePolls,
    dueLeft: Math.max(0, unreached.length - duePolls.length),
    backfillLimit: Math.max(0, remaining - changes.length - duePolls.length),
  };
}
