import { sql } from 'kysely';
import type { Executor } from './database.js';
import { CHECKINS_STREAM } from './sync-window-reads.js';

// The check-in feed's own row in rewards.sync_state: its watermark and the planner's frontier.

export interface CheckinsState {
  watermark: Date | null;
  /** End of the planned range: the next plan starts here. */
  frontier: Date | null;
}

export async function loadCheckinsState(db: Executor): Promise<CheckinsState> {
  const row = await db
    .selectFrom('rewards.sync_state')
    .select(['watermark', 'state'])
    .where('stream', '=', CHECKINS_STREAM)
    .executeTakeFirst();
  const frontier = (row?.state as { frontier?: string } | undefined)?.frontier;
  return { watermark: row?.watermark ?? null, frontier: frontier === undefined ? null : new Date(frontier) };
}

/**
 * Saves the planner's state. A watermark already stored is kept: only advanceStoredWatermark moves
 * it (window jobs move it while the planner runs, and a planner's older read must not undo that).
 */
export async function saveCheckinsState(db: Executor, state: CheckinsState, now: Date): Promise<void> {
  const json = JSON.stringify({ frontier: state.frontier?.toISOString() });
  await db
    .insertInto('rewards.sync_state')
    .values({ stream: CHECKINS_STREAM, watermark: state.watermark, state: json, updated_at: now })
    .onConflict((conflict) =>
      conflict.column('stream').doUpdateSet({
        watermark: sql<Date | null>`coalesce(rewards.sync_state.watermark, excluded.watermark)`,
        state: json,
        updated_at: now,
      }),
    )
    .execute();
}

/** Moves the stored watermark to `watermark` unless it is already there or beyond: never backwards. */
export async function advanceStoredWatermark(db: Executor, watermark: Date, now: Date): Promise<void> {
  await db
    .updateTable('rewards.sync_state')
    .set({ watermark: sql<Date>`greatest(watermark, ${watermark}::timestamptz)`, updated_at: now })
    .where('stream', '=', CHECKINS_STREAM)
    .execute();
}
