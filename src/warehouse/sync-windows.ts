import { sql, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely';
import type { Window, WindowStatus } from '../sync/windows.js';
import type { DB, SyncWindow } from './schema.js';
import type { Executor } from './database.js';
import { CHECKINS_STREAM } from './sync-window-reads.js';

const toDates = (window: Window) => ({
  window_start: new Date(window.start),
  window_end: new Date(window.end),
});

/** Records planned windows; a window already known (same start and end) is left as it is. */
export async function insertPlannedWindows(db: Executor, windows: readonly Window[]): Promise<number> {
  if (windows.length === 0) return 0;
  let inserted = 0;
  // Chunked: a multi-row VALUES uses a parameter per value.
  for (let i = 0; i < windows.length; i += 2_000) {
    const chunk = windows.slice(i, i + 2_000);
    const result = await db
      .insertInto('rewards.sync_windows')
      .values(chunk.map((window) => ({ stream: CHECKINS_STREAM, ...toDates(window) })))
      .onConflict((conflict) => conflict.doNothing())
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return inserted;
}

export async function loadWindow(db: Executor, window: Window): Promise<SyncWindow | undefined> {
  return db.selectFrom('rewards.sync_windows').selectAll().where(isWindow(window)).executeTakeFirst();
}

/** The filter that picks one window's row. */
const isWindow = (window: Window) => (eb: ExpressionBuilder<DB, 'rewards.sync_windows'>) =>
  eb.and({ stream: CHECKINS_STREAM, ...toDates(window) });

/**
 * Starts an attempt, or resumes one that a crash interrupted (its cursor is kept). Undefined
 * when the window is unknown or already complete (unless `force`): one statement decides and
 * starts.
 */
export async function beginAttempt(
  db: Executor,
  window: Window,
  now: Date,
  options: { force?: boolean } = {},
): Promise<SyncWindow | undefined> {
  return db
    .updateTable('rewards.sync_windows')
    .set({
      status: 'running',
      attempts: sql`attempts + 1`,
      attempt_started_at: sql`coalesce(attempt_started_at, ${now})`,
      updated_at: now,
    })
    .where(isWindow(window))
    .$if(options.force !== true, (query) => query.where('status', '<>', 'complete'))
    .returningAll()
    .executeTakeFirst();
}

export interface PageProgress {
  cursorBefore: Date;
  cursorPage: number;
  rows: number;
  /** Pages this checkpoint covers (a first read writes several at once); 1 when absent. */
  pages?: number;
  rejected: number;
  firstTotalCount?: number;
  apiTotalCount: number;
  now: Date;
}

/**
 * The window's checkpoint, written in the same transaction as the page's rows. Throws when no
 * row took it: a page whose checkpoint is lost must not commit as if it had one.
 */
export async function recordPage(db: Executor, window: Window, progress: PageProgress): Promise<void> {
  const result = await pageCheckpoint(db, window, progress).executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw new WindowGoneError(window);
}

/** The window's row is gone (split or merged by another process): its page cannot be checkpointed. */
export class WindowGoneError extends Error {
  override readonly name = 'WindowGoneError';
  constructor(window: Window) {
    super(
      `window ${new Date(window.start).toISOString()}..${new Date(window.end).toISOString()} is gone: its page was not checkpointed`,
    );
  }
}

/**
 * The update of `recordPage`, to run or to embed in a page's statement; `onlyIf` is an extra
 * condition (the page statement's lease check).
 */
export function pageCheckpoint(
  db: Executor,
  window: Window,
  progress: PageProgress,
  onlyIf?: RawBuilder<boolean>,
) {
  return db
    .updateTable('rewards.sync_windows')
    .set({
      cursor_before: progress.cursorBefore,
      cursor_page: progress.cursorPage,
      pages: sql`pages + ${progress.pages ?? 1}`,
      rows_seen: sql`rows_seen + ${progress.rows}`,
      rows_rejected: sql`rows_rejected + ${progress.rejected}`,
      ...(progress.firstTotalCount === undefined
        ? {}
        : { first_total_count: progress.firstTotalCount, api_total_count: progress.firstTotalCount }),
      updated_at: progress.now,
    })
    .where(isWindow(window))
    .$if(onlyIf !== undefined, (query) => query.where(onlyIf!));
}

export async function completeWindow(
  db: Executor,
  window: Window,
  outcome: { apiTotalCount: number; rowsRemoved: number; dropSuspectedAt: Date | null; now: Date },
): Promise<void> {
  await db
    .updateTable('rewards.sync_windows')
    .set({
      status: 'complete',
      api_total_count: outcome.apiTotalCount,
      rows_removed: sql`rows_removed + ${outcome.rowsRemoved}`,
      drop_suspected_at: outcome.dropSuspectedAt,
      completed_at: outcome.now,
      last_checked_at: outcome.now,
      last_error: null,
      next_attempt_at: null,
      cursor_before: null,
      cursor_page: 0,
      attempt_started_at: null,
      updated_at: outcome.now,
    })
    .where(isWindow(window))
    .execute();
}

/** `verify` found the window's counts equal. */
export async function markVerified(db: Executor, window: Window, now: Date): Promise<void> {
  await db.updateTable('rewards.sync_windows').set({ verified_at: now }).where(isWindow(window)).execute();
}

/** Complete windows whose suspected drop is due for its confirming read. */
export async function windowsWithDropToConfirm(db: Executor, suspectedBefore: Date): Promise<SyncWindow[]> {
  return db
    .selectFrom('rewards.sync_windows')
    .selectAll()
    .where('status', '=', 'complete')
    .where('drop_suspected_at', '<=', suspectedBefore)
    .orderBy('window_start')
    .execute();
}

/** Clears the cursor so the next attempt pages the window from its newest end, counters reset. */
export async function resetForRepage(
  db: Executor,
  window: Window,
  options: {
    now: Date;
    reason: string;
    countAsRepage: boolean;
    status?: Extract<WindowStatus, 'pending' | 'running'>;
    /** Only a window still in this state (the look-back re-opens complete windows, never one being paged). */
    onlyIf?: WindowStatus;
  },
): Promise<void> {
  await db
    .updateTable('rewards.sync_windows')
    .set({
      status: options.status ?? 'pending',
      cursor_before: null,
      cursor_page: 0,
      attempt_started_at: options.status === 'running' ? options.now : null,
      rows_seen: 0,
      rows_rejected: 0,
      pages: 0,
      first_total_count: null,
      repages: options.countAsRepage ? sql`repages + 1` : sql`repages`,
      last_error: options.reason,
      updated_at: options.now,
    })
    .where(isWindow(window))
    .$if(options.onlyIf !== undefined, (query) => query.where('status', '=', options.onlyIf!))
    .execute();
}

/** A failed attempt: retried once `retryInMs` has passed, by Postgres's clock (the worker's is never compared). */
export async function failWindow(
  db: Executor,
  window: Window,
  error: string,
  now: Date,
  retryInMs: number,
): Promise<void> {
  await db
    .updateTable('rewards.sync_windows')
    .set({
      status: 'failed',
      last_error: error.slice(0, 2_000),
      next_attempt_at: sql<Date>`now() + ${Math.max(0, Math.round(retryInMs))} * interval '1 millisecond'`,
      updated_at: now,
    })
    .where(isWindow(window))
    .execute();
}

export async function markChecked(
  db: Executor,
  window: Window,
  now: Date,
  apiTotalCount: number,
): Promise<void> {
  await db
    .updateTable('rewards.sync_windows')
    .set({ last_checked_at: now, api_total_count: apiTotalCount })
    .where(isWindow(window))
    .execute();
}

/** Replaces a window by its parts, in one transaction with nothing else: no gap, no overlap. */
export async function replaceWithParts(
  db: Kysely<DB>,
  window: Window,
  parts: readonly Window[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('rewards.sync_windows').where(isWindow(window)).execute();
    await insertPlannedWindows(trx, parts);
  });
}

/** Hands an interrupted window back (shutdown): pending again, its checkpoint kept for the next taker. */
export async function releaseWindow(db: Executor, window: Window, now: Date): Promise<void> {
  await db
    .updateTable('rewards.sync_windows')
    .set({ status: 'pending', updated_at: now })
    .where(isWindow(window))
    .where('status', '=', 'running')
    .execute();
}

/**
 * Replaces complete fragments that exactly cover `cell` by one complete window carrying their
 * summed accounting, in one transaction. Only rows still complete are merged; if any changed
 * meanwhile (a look-back re-opened it), nothing is merged.
 */
export async function mergeCompleteFragments(
  db: Kysely<DB>,
  cell: Window,
  fragments: readonly Window[],
  now: Date,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('rewards.sync_windows')
      .selectAll()
      .where('stream', '=', CHECKINS_STREAM)
      .where('window_start', '>=', new Date(cell.start))
      .where('window_end', '<=', new Date(cell.end))
      .forUpdate()
      .execute();
    if (rows.length !== fragments.length || rows.some((row) => row.status !== 'complete')) return false;
    const sum = (pick: (row: SyncWindow) => number) => rows.reduce((total, row) => total + pick(row), 0);
    await trx
      .deleteFrom('rewards.sync_windows')
      .where('stream', '=', CHECKINS_STREAM)
      .where('window_start', '>=', new Date(cell.start))
      .where('window_end', '<=', new Date(cell.end))
      .execute();
    await trx
      .insertInto('rewards.sync_windows')
      .values({
        stream: CHECKINS_STREAM,
        ...toDates(cell),
        status: 'complete',
        api_total_count: sum((row) => row.api_total_count ?? 0),
        rows_seen: sum((row) => row.rows_seen),
        rows_rejected: sum((row) => row.rows_rejected),
        rows_removed: sum((row) => row.rows_removed),
        pages: sum((row) => row.pages),
        repages: sum((row) => row.repages),
        attempts: Math.max(...rows.map((row) => row.attempts)),
        completed_at: now,
        // The oldest check of any fragment: the look-back decides from that when to probe the cell.
        last_checked_at: rows.some((row) => row.last_checked_at === null)
          ? null
          : new Date(Math.min(...rows.map((row) => row.last_checked_at?.getTime() ?? 0))),
        updated_at: now,
      })
      .execute();
    return true;
  });
}
