import pMap from 'p-map';
import type { PartnerApi, PageStream } from '../api/partner-api.js';
import { PagingOverrunError } from '../api/errors.js';
import { effectivePageSize, pageAllowance, type CheckIn } from '../records/index.js';
import { exponentialBackoffMs } from '../sync/backoff.js';
import { confirmedDropBefore, nextDropSuspicion } from '../sync/drop-guard.js';
import {
  advanceWatermark,
  lookbackWindows,
  mergeableCells,
  nextKeysetBound,
  planWindowsWithHistory,
  splitWindow,
  type Window,
} from '../sync/windows.js';
import {
  countWindowRows,
  unseenWindowRows,
  windowWithCounts,
  writeCheckIns,
  type WindowCounts,
} from '../warehouse/check-ins.js';
import { commitCheckInPage, relaxCommitDurability } from '../warehouse/check-in-pages.js';
import { noteSchemaDrift } from './schema-drift.js';
import { embeddedLocationsCacheFor } from '../warehouse/embedded-locations-cache.js';
import type { Executor } from '../warehouse/database.js';
import { writePageWithFallback } from '../warehouse/page-fallback.js';
import type { Rejection } from '../warehouse/rejected-records.js';
import type { SyncWindow } from '../warehouse/schema.js';
import {
  beginAttempt,
  completeWindow,
  dueWindows,
  failWindow,
  insertPlannedWindows,
  knownWindowsOverlapping,
  loadCheckinsState,
  loadWindow,
  markChecked,
  mergeCompleteFragments,
  releaseWindow,
  replaceWithParts,
  resetForRepage,
  runningWindowsLeasedFrom,
  saveCheckinsState,
  advanceStoredWatermark,
  windowOf,
  windowsInRange,
  windowsWithDropToConfirm,
} from '../warehouse/sync-windows.js';
import { prepareCheckInStorage } from './checkin-storage.js';
import { stopsThePass } from './pass-stop.js';
import { unfenced } from '../leases/fenced-database.js';
import { LeaseLostError } from '../leases/lease-lost-error.js';
import { CHECKINS_PLANNER_LEASE, windowLease } from '../leases/lease-names.js';
import { currentProcess, holderIsGone } from '../leases/process-identity.js';
import { withLease } from '../leases/with-lease.js';
import { leaseOptionsOf, type PassOutcome, type StreamDeps } from './stream.js';

export type CheckinsDeps = StreamDeps<Pick<PartnerApi, 'checkInPages' | 'countCheckIns'>>;

const DEFAULT_START_MS = 30 * 86_400_000;
const MAX_REPAGES = 3;

export type WindowOutcome =
  | { status: 'complete'; window: Window; rows: number; requests: number; removed: number; repages: number }
  | { status: 'split'; window: Window; parts: Window[]; requests: number }
  | { status: 'failed'; window: Window; requests: number; error: string }
  | { status: 'skipped'; window: Window; reason: 'locked' | 'missing' | 'already complete'; requests: 0 }
  /** The window's lease was lost midway: the current holder (or the next taker) resumes from the checkpoint. */
  | { status: 'lease-lost'; window: Window; requests: 0; reason: string };

/**
 * Plans the windows of [from, to) that no known window covers yet (so a backfill over an
 * already-synced period adds only its gaps) and moves the frontier. Under the planner's lease:
 * two planners racing would otherwise cut the same period into overlapping windows. When
 * another process holds it, plans nothing (that process is planning).
 */
export async function planCheckinWindows(
  deps: Pick<CheckinsDeps, 'db' | 'clock' | 'config' | 'logger' | 'signal'>,
  range: { from?: Date; to?: Date } = {},
): Promise<{ planned: number; merged: number; from: Date; to: Date; busy: boolean }> {
  const result = await withLease(deps.db, CHECKINS_PLANNER_LEASE, leaseOptionsOf(deps), (lease) =>
    planUnderLease({ ...deps, db: lease.db }, range),
  );
  if (!result.acquired) {
    const from = range.from ?? new Date(0);
    return { planned: 0, merged: 0, from, to: range.to ?? from, busy: true };
  }
  return { ...result.value, busy: false };
}

async function planUnderLease(
  deps: Pick<CheckinsDeps, 'db' | 'clock' | 'config' | 'logger'>,
  range: { from?: Date; to?: Date },
): Promise<{ planned: number; merged: number; from: Date; to: Date }> {
  const { db, clock, config } = deps;
  const now = clock.now();
  const state = await loadCheckinsState(db);
  const asked = {
    from:
      range.from ?? state.frontier ?? config.checkins.startAt ?? new Date(now.getTime() - DEFAULT_START_MS),
    to: range.to ?? new Date(now.getTime() - config.checkins.safetyLagMs),
  };
  // Retention first, then the month partitions of what is left to plan (checkin-storage.ts).
  const { from, to } = (await prepareCheckInStorage(deps, now, asked)) ?? { from: asked.to, to: asked.to };
  const known = await knownWindowsOverlapping(db, from, to);
  // History older than the look-back is never re-checked: it is planned in coarser windows.
  const { windowMs, historyWindowMs, lookbackMs } = config.checkins;
  const fineFrom = Math.floor((now.getTime() - lookbackMs) / windowMs) * windowMs;
  const windows = gaps({ start: from.getTime(), end: to.getTime() }, known).flatMap((gap) =>
    planWindowsWithHistory(gap.start, gap.end, { windowMs, historyWindowMs, fineFrom }),
  );
  const planned = await insertPlannedWindows(db, windows);
  const merged = await mergeFragments(deps, now);
  const frontier = state.frontier === null || to > state.frontier ? to : state.frontier;
  const watermark = state.watermark ?? (from < to ? from : null);
  await saveCheckinsState(db, { watermark, frontier }, now);
  return { planned, merged, from, to };
}

/**
 * Each planner tick leaves a short tail window (fresh data every CHECKINS_EVERY); once all of a
 * grid cell's fragments are complete they become one window again, so the look-back and verify
 * cost one probe per cell, not one per tick.
 */
async function mergeFragments(deps: Pick<CheckinsDeps, 'db' | 'config'>, now: Date): Promise<number> {
  const { db, config } = deps;
  const complete = (await windowsInRange(db, {}, ['complete'])).map((row) => ({
    ...windowOf(row),
    apiTotalCount: row.api_total_count ?? 0,
  }));
  const maxRows = config.checkins.splitPages * config.api.pageSize;
  let merged = 0;
  for (const { cell, fragments } of mergeableCells(complete, config.checkins.windowMs, maxRows)) {
    if (await mergeCompleteFragments(db, cell, fragments, now)) merged++;
  }
  return merged;
}

/** The parts of `range` that no window in `known` (sorted by start) covers. */
export function gaps(range: Window, known: readonly Window[]): Window[] {
  const out: Window[] = [];
  let cursor = range.start;
  for (const window of known) {
    if (window.start > cursor) out.push({ start: cursor, end: Math.min(window.start, range.end) });
    cursor = Math.max(cursor, window.end);
    if (cursor >= range.end) break;
  }
  if (cursor < range.end) out.push({ start: cursor, end: range.end });
  return out.filter((gap) => gap.start < gap.end);
}

async function firstPageOf<T>(stream: PageStream<T>) {
  for await (const page of stream) return page;
  throw new Error('the page stream yielded no page');
}

/**
 * Pages one closed window into the warehouse, newest first, resuming from its checkpoint.
 *
 * Page numbers shift when rows arrive above the read position (newest first), so instead of
 * asking for page 1, 2, … we move the exclusive `created_before` bound down to the oldest row
 * read (+1 ms to keep ties) and ask for page 0 again: rows arriving meanwhile are newer than
 * the bound and cannot push unread rows onto a page we have passed. Page numbers are used
 * only inside one instant that fills a whole page.
 *
 * Each page is one transaction: its rows, its embedded locations, its rejections and the
 * window's checkpoint, so a crash resumes at the next page. At the end, the rows seen in this
 * attempt plus rejections must equal the API's total_count; otherwise the window is re-paged
 * (bounded) and what happened is recorded on its row.
 */
export async function pageWindow(
  deps: CheckinsDeps,
  window: Window,
  options: PageWindowOptions = {},
): Promise<WindowOutcome> {
  try {
    const leased = await withLease(deps.db, windowLease(window), leaseOptionsOf(deps), (lease) =>
      pageLeasedWindow({ ...deps, db: lease.db, signal: lease.signal }, window, options),
    );
    return leased.acquired ? leased.value : { status: 'skipped', window, reason: 'locked', requests: 0 };
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
    deps.logger.warn(
      { window: describe(window), reason: error.reason },
      'check-in window stopped: its lease was lost; it resumes from its checkpoint',
    );
    return { status: 'lease-lost', window, requests: 0, reason: error.message };
  }
}

export interface PageWindowOptions {
  force?: boolean;
  /**
   * `resync`: page the window from its first page whatever its state (complete ones too), giving
   * this reason. The reset happens under the window's lease, so it never disturbs a process paging
   * it; rows stay as they are until the new read rewrites them, and the drop guard's suspicion is kept.
   */
  restart?: string;
}

/** pageWindow's work, with `deps.db` fenced by the window's lease and `deps.signal` aborting when it is lost. */
async function pageLeasedWindow(
  deps: CheckinsDeps,
  window: Window,
  options: PageWindowOptions,
): Promise<WindowOutcome> {
  const { db } = deps;
  try {
    if (options.restart !== undefined) {
      await resetForRepage(db, window, {
        now: deps.clock.now(),
        reason: options.restart,
        countAsRepage: false,
      });
    }
    const started = await beginAttempt(db, window, deps.clock.now(), options);
    if (started === undefined) {
      const missing = (await loadWindow(db, window)) === undefined;
      return { status: 'skipped', window, reason: missing ? 'missing' : 'already complete', requests: 0 };
    }
    return await pageAttempts(deps, window, started);
  } catch (error) {
    // A lost lease: nothing more may be written; withLease reports it.
    if (error instanceof LeaseLostError || deps.signal?.reason instanceof LeaseLostError) throw error;
    if (deps.signal?.aborted === true) {
      // Shutting down: not a failure. The checkpoint stays; the next taker resumes from it.
      await releaseWindow(db, window, deps.clock.now());
      throw error;
    }
    const message = error instanceof Error ? error.message : String(error);
    const row = await loadWindow(db, window);
    await failWindow(db, window, message, deps.clock.now(), retryDelayMs(row?.attempts ?? 1));
    deps.logger.warn({ window: describe(window), err: error }, 'check-in window failed; it will be retried');
    // The API asked everyone to wait longer than RETRY_AFTER_MAX: not this window's failure
    // alone; the whole pass (or the worker's job) stops here.
    if (stopsThePass(error)) throw error;
    return { status: 'failed', window, requests: 0, error: message };
  }
}

/** Backoff for a failed window: 30 s doubling per attempt, at most an hour. */
export function retryDelayMs(attempts: number): number {
  return exponentialBackoffMs(attempts, 30_000, 3_600_000);
}

async function pageAttempts(deps: CheckinsDeps, window: Window, started: SyncWindow): Promise<WindowOutcome> {
  const { db, api, clock, signal } = deps;
  let row = started;
  let requests = 0;
  for (let repage = 0; ; repage++) {
    const paged = await pageToEnd(deps, window, row);
    requests += paged.requests;
    if (paged.split !== undefined) return { status: 'split', window, parts: paged.split, requests };

    const unrecordedStart = clock.now();
    const tally = await windowWithCounts(db, rangeOf(window), unrecordedStart);
    if (tally === undefined) throw new Error(`window ${describe(window)} disappeared while paging`);
    ({ row } = tally);
    const { counts } = tally;
    // The same instant the counts were taken against.
    const attemptStart = row.attempt_started_at ?? unrecordedStart;
    const accounted = counts.seenSince + row.rows_rejected;
    let apiTotal = row.first_total_count ?? -1;
    if (accounted !== apiTotal) {
      // The count moved while we paged (late arrival, removal): ask again before deciding.
      apiTotal = await api.countCheckIns({
        createdAfter: new Date(window.start),
        createdBefore: new Date(window.end),
        signal,
      });
      requests++;
    }
    const now = clock.now();
    if (accounted === apiTotal) {
      const dropped = await completeConsistentWindow(deps, window, row, {
        apiTotal,
        attemptStart,
        now,
        // Live rows last seen before this attempt: the ones it did not meet.
        unseen: counts.total - counts.seenSince,
      });
      if (dropped.deleted > 0 || dropped.suspected > 0) {
        deps.logger.info(
          { window: describe(window), deleted: dropped.deleted, suspected: dropped.suspected },
          dropped.deleted > 0
            ? 'check-ins missing from two reads were marked deleted'
            : 'check-ins missing from the feed; a later read confirms before anything is deleted',
        );
      }
      // Distinct rows of the window, not records read: keyset ties are read twice.
      deps.metrics.rowsIngested.inc({ stream: 'checkins' }, counts.seenSince);
      return {
        status: 'complete',
        window,
        rows: counts.seenSince,
        requests,
        removed: dropped.deleted,
        repages: repage,
      };
    }
    const reason = `count moved while paging: api total_count ${apiTotal}, seen ${counts.seenSince} + ${row.rows_rejected} rejected`;
    if (repage >= MAX_REPAGES) throw new Error(`${reason}; gave up after ${MAX_REPAGES} re-pages`);
    deps.logger.info(
      { window: describe(window), apiTotal, seen: counts.seenSince },
      'page shift detected; re-paging window',
    );
    await resetForRepage(db, window, { now, reason, countAsRepage: true, status: 'running' });
    row = (await loadWindow(db, window)) ?? row;
  }
}

/**
 * Every row of the window was met in this attempt, so rows not met are gone from the API, or the
 * API answered short for a moment. They are marked deleted only when an earlier read, at least
 * CHECKINS_DELETE_CONFIRM_AFTER before, missed them too (src/sync/drop-guard.ts).
 */
async function completeConsistentWindow(
  deps: CheckinsDeps,
  window: Window,
  row: SyncWindow,
  read: { apiTotal: number; attemptStart: Date; now: Date; unseen: number },
): Promise<{ deleted: number; suspected: number }> {
  const state = {
    suspectedAt: row.drop_suspected_at?.getTime() ?? null,
    attemptStart: read.attemptStart.getTime(),
    confirmAfterMs: deps.config.checkins.deleteConfirmAfterMs,
  };
  const complete = (executor: Executor, deleted: number) => {
    // Rows marked deleted were among the unseen ones; the rest are still suspected.
    const suspected = read.unseen - deleted;
    const next = nextDropSuspicion(state, suspected);
    return completeWindow(executor, window, {
      apiTotalCount: read.apiTotal,
      rowsRemoved: deleted,
      dropSuspectedAt: next === null ? null : new Date(next),
      now: read.now,
    }).then(() => ({ deleted, suspected }));
  };
  const confirmedBefore = confirmedDropBefore(state);
  if (confirmedBefore === null || read.unseen === 0) return complete(deps.db, 0);
  return deps.db.transaction().execute(async (trx) => {
    await relaxCommitDurability(trx);
    return complete(trx, await unseenWindowRows(trx, rangeOf(window), new Date(confirmedBefore), read.now));
  });
}

async function pageToEnd(
  deps: CheckinsDeps,
  window: Window,
  row: SyncWindow,
): Promise<{ requests: number; rows: number; split?: Window[] }> {
  const { db, api, clock, config, signal } = deps;
  const pageSize = config.api.pageSize;
  let before = row.cursor_before?.getTime() ?? window.end;
  let page = row.cursor_page;
  let firstOfAttempt = row.first_total_count === null && page === 0 && before === window.end;
  const rejectionsSeen = new Set<string>();
  // Per database, not per lease: the locations this process wrote stay written across windows.
  const embeddedLocations = embeddedLocationsCacheFor(unfenced(db));
  let requests = 0;
  let rows = 0;
  let allowed = 0;
  /** One page request, and when it started (the stale-write guards order reads by it). */
  const fetchPage = (createdBefore: number, startPage: number) => {
    requests++;
    const seenAt = clock.now();
    const result = firstPageOf(
      api.checkInPages({
        createdAfter: new Date(window.start),
        createdBefore: new Date(createdBefore),
        startPage,
        pageSize,
        signal,
      }),
    );
    // Settled by whoever awaits it; a prefetch abandoned by a failed write must not go unhandled.
    result.catch(() => undefined);
    return { seenAt, result };
  };
  let pending = fetchPage(before, page);
  for (;;) {
    signal?.throwIfAborted();
    const { seenAt } = pending;
    const result = await pending.result;
    const total = result.pagination.totalCount;
    const servedPageSize = effectivePageSize(result.pagination, pageSize);
    // Keyset paging re-reads the rows tied at a page's oldest instant, so allow twice the pages.
    allowed = Math.max(allowed, 2 * pageAllowance(result.pagination, servedPageSize));
    if (requests > allowed) throw new PagingOverrunError(requests, allowed);
    if (firstOfAttempt) {
      const parts = splitWindow(window, total, config.checkins.splitPages * servedPageSize);
      if (parts.length > 1) {
        await replaceWithParts(db, window, parts);
        deps.logger.info({ window: describe(window), total, parts: parts.length }, 'window too large; split');
        return { requests, rows, split: parts };
      }
    }
    const records: CheckIn[] = result.records;
    const done = result.pagination.nextPage === null || records.length + result.rejections.length === 0;
    let nextBefore = before;
    let nextPage = page + 1;
    const oldest = records.reduce((min, r) => Math.min(min, r.createdAt.getTime()), Number.POSITIVE_INFINITY);
    if (!done && Number.isFinite(oldest)) {
      const bound = nextKeysetBound(before, oldest);
      if (bound !== null) {
        nextBefore = bound;
        nextPage = 0;
      }
    }
    // The next page's bound is known now: fetch it while this page commits. Its rows cannot be
    // written before this page's checkpoint, and a crash re-fetches from that checkpoint anyway.
    if (!done) pending = fetchPage(nextBefore, nextPage);
    const isFresh = (r: Rejection) => {
      const key = r.recordId ?? JSON.stringify(r.payload);
      if (rejectionsSeen.has(key)) return false;
      rejectionsSeen.add(key);
      return true;
    };
    const fresh = result.rejections.filter(isFresh);
    const embedded = embeddedLocations.unwritten(
      records.map((record) => record.location),
      seenAt,
    );
    const { refused } = await writePageWithFallback({
      records,
      writePage: (rows, refusedRows) =>
        commitCheckInPage(db, {
          window,
          checkIns: rows,
          locations: embedded,
          rejections: [...result.rejections, ...refusedRows],
          firstMet: [...fresh, ...refusedRows.filter(isFresh)],
          checkpoint: {
            cursorBefore: new Date(nextBefore),
            cursorPage: nextPage,
            rows: records.length - refusedRows.length,
            apiTotalCount: total,
            now: seenAt,
            ...(firstOfAttempt ? { firstTotalCount: total } : {}),
          },
          seenAt,
        }),
      writeOne: (record) => db.transaction().execute((trx) => writeCheckIns(trx, [record], seenAt)),
      rejectionOf: (record) => ({ recordId: record.id, payload: record.raw }),
    });
    // Committed: these need no writing on the next pages (record by record wrote its own).
    if (refused.length === 0) embeddedLocations.remember(embedded, seenAt);
    await noteSchemaDrift(deps, 'check_ins', result.drift);
    fresh.push(...refused);
    if (refused.length > 0) {
      deps.logger.warn(
        { window: describe(window), refused: refused.map((r) => r.recordId) },
        'the database refused some check-ins of a page; they are in rejected_records, the rest is stored',
      );
    }
    if (fresh.length > 0) deps.metrics.recordsRejected.inc({ stream: 'checkins' }, fresh.length);
    rows += records.length - refused.length;
    if (done) return { requests, rows };
    before = nextBefore;
    page = nextPage;
    firstOfAttempt = false;
  }
}

/** One window's count in the API against the warehouse's live rows plus its rejections. */
export interface WindowProbe {
  apiTotal: number;
  warehouse: number;
  rejected: number;
  matches: boolean;
}

/**
 * The one-request check shared by the look-back and `verify`: a `page_size=1` count of the
 * window in the API, compared with the warehouse's live rows plus the window's rejected records.
 */
export async function probeWindow(
  deps: Pick<CheckinsDeps, 'db' | 'api' | 'signal'>,
  row: SyncWindow,
  counts?: WindowCounts,
): Promise<WindowProbe> {
  const ours = counts ?? (await countWindowRows(deps.db, row.window_start, row.window_end, null));
  const apiTotal = await deps.api.countCheckIns({
    createdAfter: row.window_start,
    createdBefore: row.window_end,
    signal: deps.signal,
  });
  return {
    apiTotal,
    warehouse: ours.total,
    rejected: row.rows_rejected,
    matches: apiTotal === ours.total + row.rows_rejected,
  };
}

/**
 * Look-back: complete windows inside CHECKINS_LOOKBACK not checked for CHECKINS_LOOKBACK_EVERY
 * (`everyMs: 0`, a foreground `run`: all of them). A window holding ongoing visits is re-paged
 * (only a read shows ended_at); any other is probed and re-paged only when the counts differ.
 */
export async function recheckLookback(
  deps: CheckinsDeps,
  options: { everyMs?: number } = {},
): Promise<{ probes: number; repaged: number }> {
  const { db, clock, config, signal } = deps;
  const now = clock.now();
  // Windows never exceed CHECKINS_WINDOW, so none ending inside the look-back starts earlier than this.
  const from = new Date(now.getTime() - config.checkins.lookbackMs - config.checkins.windowMs);
  const complete = (await windowsInRange(db, { from }, ['complete'])).map((row) => ({
    ...windowOf(row),
    lastCheckedAt: row.last_checked_at?.getTime() ?? null,
    row,
  }));
  const candidates = lookbackWindows(
    complete,
    now.getTime(),
    config.checkins.lookbackMs,
    options.everyMs ?? config.checkins.lookbackEveryMs,
  ).map((candidate) => candidate.row);
  let probes = 0;
  let repaged = 0;
  // A suspected drop is read again once it is old enough to be confirmed (or cleared), wherever
  // its window lies: outside the look-back nothing else would read it again.
  const confirmBefore = new Date(now.getTime() - config.checkins.deleteConfirmAfterMs);
  for (const row of await windowsWithDropToConfirm(db, confirmBefore)) {
    await resetForRepage(db, windowOf(row), {
      now,
      reason: 'confirming a suspected drop of rows',
      countAsRepage: false,
      onlyIf: 'complete',
    });
    repaged++;
  }
  for (const row of candidates) {
    signal?.throwIfAborted();
    const window = windowOf(row);
    const counts = await countWindowRows(db, row.window_start, row.window_end, null);
    let reason: string | null = counts.ongoing > 0 ? `look-back: ${counts.ongoing} ongoing visits` : null;
    if (reason === null) {
      const probe = await probeWindow(deps, row, counts);
      probes++;
      if (!probe.matches)
        reason = `look-back: api total_count ${probe.apiTotal}, warehouse ${probe.warehouse}`;
      else await markChecked(db, window, now, probe.apiTotal);
    }
    if (reason !== null) {
      await resetForRepage(db, window, { now, reason, countAsRepage: false, onlyIf: 'complete' });
      repaged++;
    }
  }
  return { probes, repaged };
}

/**
 * What every check-in tick does before paging: plan new windows, then the look-back. Shared by
 * the worker's `checkins-plan` job (which hands due windows to the window queue) and a
 * foreground `run` (which pages them itself, re-checking the whole look-back).
 */
export async function planAndRecheck(
  deps: CheckinsDeps,
  options: { fullLookback?: boolean } = {},
): Promise<{ planned: number; probes: number; repaged: number }> {
  const result = await withLease(deps.db, CHECKINS_PLANNER_LEASE, leaseOptionsOf(deps), async (lease) => {
    const leased = { ...deps, db: lease.db, signal: lease.signal };
    const plan = await planUnderLease(leased, {});
    const lookback = await recheckLookback(leased, options.fullLookback === true ? { everyMs: 0 } : {});
    return { planned: plan.planned, ...lookback };
  });
  // Another process is planning and re-checking right now.
  return result.acquired ? result.value : { planned: 0, probes: 0, repaged: 0 };
}

/** Moves the low watermark across contiguous complete windows; never backwards. */
export async function updateWatermark(deps: Pick<CheckinsDeps, 'db' | 'clock'>): Promise<Date | null> {
  const { db, clock } = deps;
  const state = await loadCheckinsState(db);
  if (state.watermark === null) return null;
  const ahead = await windowsInRange(db, { from: state.watermark });
  const moved = advanceWatermark(
    state.watermark.getTime(),
    ahead.map((row) => ({ ...windowOf(row), status: row.status })),
  );
  if (moved === state.watermark.getTime()) return state.watermark;
  const watermark = new Date(moved);
  // The watermark alone: the planner may be moving the frontier right now.
  await advanceStoredWatermark(db, watermark, clock.now());
  return watermark;
}

/**
 * The windows to page now: those due (dueWindows), plus running windows whose lease a process of
 * this host took and that process is gone (kill -9): taken over at once instead of after the
 * lease's TTL. Used by the planner job, `run checkins` and `backfill`.
 */
export async function windowsToPage(
  db: CheckinsDeps['db'],
  options: { ignoreBackoff?: boolean } = {},
): Promise<SyncWindow[]> {
  const due = await dueWindows(db, options);
  const self = currentProcess();
  if (self.hostKey === null) return due;
  const orphaned = (await runningWindowsLeasedFrom(db, self.hostKey)).filter((row) =>
    holderIsGone(self, { hostKey: self.hostKey, pid: row.lease_pid }),
  );
  if (orphaned.length === 0) return due;
  const known = new Set(due.map((row) => row.window_start.getTime()));
  return [...due, ...orphaned.filter((row) => !known.has(row.window_start.getTime()))].sort(
    (a, b) => a.window_start.getTime() - b.window_start.getTime(),
  );
}

/** Windows one foreground pass pages at once (the worker's window queue runs two per process). */
const WINDOWS_IN_FLIGHT = 2;

/**
 * `run checkins`: a full pass in the foreground. Plans, re-checks every window of the look-back
 * (whatever CHECKINS_LOOKBACK_EVERY says), pages every due window in this process (failed ones
 * too, without waiting out their backoff), moves the watermark. Windows still failed at the end
 * are named in `problems`, so `run` can exit 1 naming them.
 */
export async function runCheckinsPass(
  deps: CheckinsDeps,
  options: { fullLookback?: boolean } = {},
): Promise<PassOutcome> {
  // `fullLookback: false` paces the look-back by CHECKINS_LOOKBACK_EVERY, as the worker does.
  const prepared = await planAndRecheck(deps, { fullLookback: options.fullLookback ?? true });
  const tally = { complete: 0, split: 0, failed: 0, skipped: 0, 'lease-lost': 0 };
  let stopped: Error | undefined;
  let rows = 0;
  let requests = prepared.probes;
  // Splits add new due windows, so keep taking due windows until none is left.
  for (let round = 0; round < 20; round++) {
    // A running window is due once its lease has expired (its holder died): resumed from its checkpoint.
    const due = await windowsToPage(deps.db, { ignoreBackoff: round === 0 });
    const mine = due.filter((row) => row.status !== 'failed' || round === 0);
    if (mine.length === 0) break;
    let progressed = false;
    // Two windows in flight, as a worker runs two window jobs: one parses while the other waits.
    // After an error that stops the pass, no further window starts; the one in flight finishes.
    await pMap(
      mine,
      async (row) => {
        if (stopped !== undefined) return;
        let outcome: WindowOutcome;
        try {
          outcome = await pageWindow(deps, windowOf(row));
        } catch (error) {
          if (!stopsThePass(error)) throw error;
          stopped ??= error;
          return;
        }
        requests += outcome.requests;
        tally[outcome.status]++;
        if (outcome.status === 'complete') rows += outcome.rows;
        if (outcome.status === 'complete' || outcome.status === 'split') progressed = true;
      },
      { concurrency: WINDOWS_IN_FLIGHT },
    );
    if (stopped !== undefined) throw stopped;
    if (!progressed) break;
  }
  const watermark = await updateWatermark(deps);
  const unfinished = await windowsInRange(deps.db, {}, ['failed']);
  const problems = unfinished.map(
    (row) => `window ${describe(windowOf(row))} failed: ${row.last_error ?? 'no reason recorded'}`,
  );
  return {
    status: problems.length > 0 ? 'partial' : 'succeeded',
    rows,
    requests,
    details: {
      planned: prepared.planned,
      ...tally,
      lookbackProbes: prepared.probes,
      lookbackRepaged: prepared.repaged,
      watermark,
    },
    ...(problems.length > 0
      ? { error: `${problems.length} window(s) failed and will be retried`, problems }
      : {}),
  };
}

function rangeOf(window: Window): { start: Date; end: Date } {
  return { start: new Date(window.start), end: new Date(window.end) };
}

function describe(window: Window): string {
  return `${new Date(window.start).toISOString()}..${new Date(window.end).toISOString()}`;
}
