import type { JobsOptions } from 'bullmq';
import { windowKey, type Window } from '../../sync/windows.js';
import type { SyncWindow } from '../../warehouse/schema.js';
import { windowOf } from './window-lifecycle.js';
import type { CheckinsDeps } from './deps.js';
import { pageWindow } from './page-window.js';
import { updateWatermark } from './watermark.js';

/** The window job's name, and its queue's (src/worker/queues.ts `QUEUES.checkinsWindow`). */
export const CHECKINS_WINDOW_JOB = 'checkins-window';

/** The subset of BullMQ's Queue that handing windows to the workers needs. */
export interface WindowQueue {
  addBulk(jobs: { name: string; data: Window; opts: JobsOptions }[]): Promise<unknown>;
}

type Enqueueable = Window & { generation: number };

/**
 * Hands windows to the window queue, as the planner job, the window job (a split's parts),
 * `backfill` and `verify --repair` do. Job ids carry the row's last change so a window re-opened
 * later (look-back, repair) gets a new job. `jobOptions`: what every job is given
 * (src/worker/queues.ts `JOB_OPTIONS`).
 */
export async function enqueueWindows(
  queue: WindowQueue,
  windows: ReadonlyArray<SyncWindow | Enqueueable>,
  jobOptions: JobsOptions,
): Promise<number> {
  const jobs = windows.map((item) => {
    const window = 'window_start' in item ? windowOf(item) : { start: item.start, end: item.end };
    const generation = 'window_start' in item ? item.updated_at.getTime() : item.generation;
    return {
      name: CHECKINS_WINDOW_JOB,
      data: window,
      opts: { jobId: `w-${windowKey(window)}-${generation}`, ...jobOptions },
    };
  });
  for (let i = 0; i < jobs.length; i += 500) await queue.addBulk(jobs.slice(i, i + 500));
  return jobs.length;
}

/**
 * Pages one window as the window job does: a split's parts go back to the queue, the watermark
 * moves. The window's lease in pageWindow, not the job id, is what stops two workers paging the
 * same window: a removed job no longer dedupes.
 */
export async function pageQueuedWindow(
  deps: CheckinsDeps,
  window: Window,
  /** Opened only for a split's parts. */
  queue: () => WindowQueue,
  jobOptions: JobsOptions,
) {
  const outcome = await pageWindow(deps, window);
  if (outcome.status === 'split') {
    await enqueueWindows(
      queue(),
      outcome.parts.map((part) => ({ ...part, generation: 0 })),
      jobOptions,
    );
  }
  await updateWatermark(deps);
  if (outcome.status === 'failed') {
    // Recorded on the window (with its retry time); the planner hands it out again when due.
    return { ...outcome, window: windowKey(window) };
  }
  return {
    status: outcome.status,
    window: windowKey(window),
    requests: outcome.requests,
    ...(outcome.status === 'complete' ? { rows: outcome.rows } : {}),
  };
}
