import { setTimeout as sleep } from 'node:timers/promises';
import pMap from 'p-map';
import { windowsToResync, type ResyncProgress, type ResyncRange } from '../../sync/resync-plan.js';
import { windowKey, type Window } from '../../sync/windows.js';
import { windowsOverlapping } from '../../warehouse/resync.js';
import { windowOf } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';
import { pageWindow, type WindowOutcome } from './page-window.js';
import { planWhenPlannerFree } from './plan.js';
import { updateWatermark } from './watermark.js';
import { CHECKINS_TUNING } from './tuning.js';
import { stopsThePass } from '../pass-stop.js';
import type { PassOutcome } from '../stream.js';

export interface CheckinsResyncOptions {
  range: ResyncRange;
  /** Wait for windows another process is paging (and for the planner) instead of naming them as left. */
  wait: boolean;
  progress?: ResyncProgress | undefined;
  /** Pause between two looks at windows another process holds (tests shorten it). */
  lockedRetryMs?: number;
}

/** Listings of the range's windows one re-sync makes at most. */
const MAX_ROUNDS = CHECKINS_TUNING.maxRounds.resync;

/** What one re-sync has done so far, across its rounds. */
interface ResyncRun {
  options: CheckinsResyncOptions;
  /** Windows re-paged, by windowKey. */
  done: Set<string>;
  attempts: Map<string, number>;
  /** Windows failed CHECKINS_TUNING.resyncAttempts times, with their last error. */
  givenUp: Map<string, string>;
  tally: { repaged: number; split: number; failed: number; locked: number; rows: number; removed: number };
  requests: number;
  /** Windows another process held in the last round. */
  stillLocked: Window[];
}

/**
 * `resync checkins` (docs/resync.md): plans the gaps of the range (as `backfill` does), then re-pages
 * every window overlapping it from its first page, whatever its state, each under its window lease
 * (pageWindow with `restart`). Rows stay queryable throughout (nothing is removed before the read);
 * ended visits and corrections land as the pages are rewritten; rows the new read misses go through
 * the drop guard as in the look-back (suspected first, deleted only on a confirming read).
 * A window another process is paging is waited for with `wait`, otherwise named as left behind.
 */
export async function resyncCheckins(
  deps: CheckinsDeps,
  options: CheckinsResyncOptions,
): Promise<PassOutcome> {
  const plan = await planTheRange(deps, options);
  const run: ResyncRun = {
    options,
    done: new Set(),
    attempts: new Map(),
    givenUp: new Map(),
    tally: { repaged: 0, split: 0, failed: 0, locked: 0, rows: 0, removed: 0 },
    requests: 0,
    stillLocked: [],
  };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    deps.signal?.throwIfAborted();
    const listed = (await windowsOverlapping(deps.db, options.range)).map(windowOf);
    const todo = windowsToResync(listed, options.range, run.done).filter(
      (window) => !run.givenUp.has(windowKey(window)),
    );
    options.progress?.({ done: run.done.size, total: run.done.size + todo.length, unit: 'windows' });
    if (todo.length === 0) {
      run.stillLocked = [];
      break;
    }
    const { progressed, locked } = await resyncRound(deps, run, todo);
    deps.signal?.throwIfAborted();
    run.stillLocked = locked;
    if (!progressed && locked.length > 0) {
      run.tally.locked = locked.length;
      if (!options.wait) break;
      // Another process is paging these windows right now; re-page them from the top once it is done.
      await sleep(options.lockedRetryMs ?? 1_000, undefined, { signal: deps.signal });
    }
  }
  return resyncOutcome(run, plan.planned, await updateWatermark(deps));
}

/** Plans the gaps of the range, waiting for the planner lease a worker's planner holds for a moment. */
async function planTheRange(
  deps: CheckinsDeps,
  options: CheckinsResyncOptions,
): Promise<{ planned: number }> {
  const { range } = options;
  const planRange = {
    ...(range.from === null ? {} : { from: new Date(range.from) }),
    ...(range.to === null ? {} : { to: new Date(range.to) }),
  };
  const plan = await planWhenPlannerFree(deps, planRange, { wait: options.wait });
  if (plan.busy) throw new Error('another process held the check-in planner lease for a minute: try again');
  return plan;
}

/**
 * Re-pages the windows left, CHECKINS_TUNING.windowsInFlight at a time. After an error that stops the
 * pass, no further window starts; the ones in flight finish, then the error is thrown.
 */
async function resyncRound(
  deps: CheckinsDeps,
  run: ResyncRun,
  todo: readonly Window[],
): Promise<{ progressed: boolean; locked: Window[] }> {
  const locked: Window[] = [];
  const total = run.done.size + todo.length;
  let progressed = false;
  let stopped: Error | undefined;
  await pMap(
    todo,
    async (window) => {
      if (stopped !== undefined || deps.signal?.aborted === true) return;
      let outcome: WindowOutcome;
      try {
        outcome = await pageWindow(deps, window, { restart: 'resync: re-paging the window from the top' });
      } catch (error) {
        if (!stopsThePass(error)) throw error;
        stopped ??= error;
        return;
      }
      run.requests += outcome.requests;
      if (noteOutcome(run, window, outcome, total) === 'locked') locked.push(window);
      else progressed = true;
    },
    { concurrency: CHECKINS_TUNING.windowsInFlight },
  );
  if (stopped !== undefined) throw stopped;
  return { progressed, locked };
}

/** Counts one window's outcome: whether it moved the re-sync on, or another process holds the window. */
function noteOutcome(
  run: ResyncRun,
  window: Window,
  outcome: WindowOutcome,
  total: number,
): 'progressed' | 'locked' {
  const { tally } = run;
  const key = windowKey(window);
  switch (outcome.status) {
    case 'complete':
      run.done.add(key);
      tally.repaged++;
      tally.rows += outcome.rows;
      tally.removed += outcome.removed;
      run.options.progress?.({ done: run.done.size, total, unit: 'windows' });
      return 'progressed';
    case 'split':
      // Its parts are new windows of the range: the next listing finds them.
      tally.split++;
      return 'progressed';
    case 'failed': {
      tally.failed++;
      const tries = (run.attempts.get(key) ?? 0) + 1;
      run.attempts.set(key, tries);
      if (tries >= CHECKINS_TUNING.resyncAttempts) run.givenUp.set(key, outcome.error);
      return 'progressed';
    }
    case 'skipped':
      // Missing: merged or split by a planner meanwhile; the next listing has its successor.
      return outcome.reason === 'locked' ? 'locked' : 'progressed';
    case 'lease-lost':
      return 'locked';
  }
}

function resyncOutcome(run: ResyncRun, planned: number, watermark: Date | null): PassOutcome {
  const { tally } = run;
  const problems = [
    ...[...run.givenUp].map(
      ([key, error]) => `window ${describeKey(key)} failed ${CHECKINS_TUNING.resyncAttempts} times: ${error}`,
    ),
    ...run.stillLocked.map(
      (window) =>
        `window ${describeKey(windowKey(window))} not re-synced: another process is paging it (use --wait, or run again)`,
    ),
  ];
  return {
    status: problems.length === 0 ? 'succeeded' : tally.repaged > 0 ? 'partial' : 'failed',
    rows: tally.rows,
    requests: run.requests,
    details: {
      resync: true,
      planned,
      windows: run.done.size,
      ...tally,
      watermark,
    },
    ...(problems.length === 0 ? {} : { error: `${problems.length} window(s) not re-synced`, problems }),
  };
}

function describeKey(key: string): string {
  const [start, end] = key.split('-').map(Number);
  return `${new Date(start ?? 0).toISOString()}..${new Date(end ?? 0).toISOString()}`;
}
