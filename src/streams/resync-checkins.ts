import { setTimeout as sleep } from 'node:timers/promises';
import pMap from 'p-map';
import { windowsToResync, type ResyncProgress, type ResyncRange } from '../sync/resync-plan.js';
import { windowKey, type Window } from '../sync/windows.js';
import { windowsOverlapping } from '../warehouse/resync.js';
import { windowOf } from '../warehouse/sync-windows.js';
import type { CheckinsDeps } from './checkins/deps.js';
import { pageWindow, type WindowOutcome } from './checkins/page-window.js';
import { planCheckinWindows } from './checkins/plan.js';
import { updateWatermark } from './checkins/watermark.js';
import { CHECKIN_WINDOWS_IN_FLIGHT } from './checkins/windows-in-flight.js';
import { stopsThePass } from './pass-stop.js';
import type { PassOutcome } from './stream.js';

export interface CheckinsResyncOptions {
  range: ResyncRange;
  /** Wait for windows another process is paging (and for the planner) instead of naming them as left. */
  wait: boolean;
  progress?: ResyncProgress | undefined;
  /** Pause between two looks at windows another process holds (tests shorten it). */
  lockedRetryMs?: number;
}

/** Attempts per window within one re-sync before it is named as left behind. */
const MAX_ATTEMPTS = 3;
/** Tries for the planner lease (a worker's planner holds it for a moment each tick). */
const PLANNER_TRIES = 120;

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
  const { range } = options;
  const retryMs = options.lockedRetryMs ?? 1_000;
  const planRange = {
    ...(range.from === null ? {} : { from: new Date(range.from) }),
    ...(range.to === null ? {} : { to: new Date(range.to) }),
  };
  let plan = await planCheckinWindows(deps, planRange);
  for (let tries = 1; plan.busy && (options.wait || tries < PLANNER_TRIES); tries++) {
    await sleep(500, undefined, { signal: deps.signal });
    plan = await planCheckinWindows(deps, planRange);
  }
  if (plan.busy) throw new Error('another process held the check-in planner lease for a minute: try again');

  const done = new Set<string>();
  const attempts = new Map<string, number>();
  const givenUp = new Map<string, string>();
  const tally = { repaged: 0, split: 0, failed: 0, locked: 0, rows: 0, removed: 0 };
  let requests = 0;
  let stillLocked: Window[] = [];
  for (let round = 0; round < 1_000; round++) {
    deps.signal?.throwIfAborted();
    const listed = (await windowsOverlapping(deps.db, range)).map(windowOf);
    const todo = windowsToResync(listed, range, done).filter((window) => !givenUp.has(windowKey(window)));
    options.progress?.({ done: done.size, total: done.size + todo.length, unit: 'windows' });
    if (todo.length === 0) {
      stillLocked = [];
      break;
    }
    const locked: Window[] = [];
    const doneBefore = done.size;
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
        requests += outcome.requests;
        const key = windowKey(window);
        switch (outcome.status) {
          case 'complete':
            done.add(key);
            tally.repaged++;
            tally.rows += outcome.rows;
            tally.removed += outcome.removed;
            progressed = true;
            options.progress?.({ done: done.size, total: doneBefore + todo.length, unit: 'windows' });
            break;
          case 'split':
            // Its parts are new windows of the range: the next listing finds them.
            tally.split++;
            progressed = true;
            break;
          case 'failed': {
            tally.failed++;
            const tries = (attempts.get(key) ?? 0) + 1;
            attempts.set(key, tries);
            if (tries >= MAX_ATTEMPTS) givenUp.set(key, outcome.error);
            progressed = true;
            break;
          }
          case 'skipped':
            // Missing: merged or split by a planner meanwhile; the next listing has its successor.
            if (outcome.reason === 'locked') locked.push(window);
            else progressed = true;
            break;
          case 'lease-lost':
            locked.push(window);
            break;
        }
      },
      { concurrency: CHECKIN_WINDOWS_IN_FLIGHT },
    );
    if (stopped !== undefined) throw stopped;
    deps.signal?.throwIfAborted();
    stillLocked = locked;
    if (!progressed && locked.length > 0) {
      tally.locked = locked.length;
      if (!options.wait) break;
      // Another process is paging these windows right now; re-page them from the top once it is done.
      await sleep(retryMs, undefined, { signal: deps.signal });
    }
  }
  const watermark = await updateWatermark(deps);
  const problems = [
    ...[...givenUp].map(
      ([key, error]) => `window ${describeKey(key)} failed ${MAX_ATTEMPTS} times: ${error}`,
    ),
    ...stillLocked.map(
      (window) =>
        `window ${describeKey(windowKey(window))} not re-synced: another process is paging it (use --wait, or run again)`,
    ),
  ];
  return {
    status: problems.length === 0 ? 'succeeded' : tally.repaged > 0 ? 'partial' : 'failed',
    rows: tally.rows,
    requests,
    details: {
      resync: true,
      planned: plan.planned,
      windows: done.size,
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
