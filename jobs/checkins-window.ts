import type { Queue } from 'bullmq';
import type { Config } from '../src/config.js';
import type { RedisClient } from '../src/redis/connection.js';
import { z } from 'zod';
import { pageWindow } from '../src/streams/checkins/page-window.js';
import { updateWatermark } from '../src/streams/checkins/watermark.js';
import { windowKey, type Window } from '../src/sync/windows.js';
import type { SyncWindow } from '../src/warehouse/schema.js';
import { windowOf } from '../src/warehouse/sync-windows.js';
import { defineJob } from '../src/worker/job-definition.js';
import { JOB_OPTIONS, QUEUES } from '../src/worker/queues.js';
import { createQueue } from '../src/worker/worker.js';

const windowPayload = z
  .object({ start: z.number().int(), end: z.number().int() })
  .refine((w) => w.start < w.end, 'start must be before end');

/** Pages one window. The window's lease in pageWindow, not the job id, is what stops two workers
 * paging the same window: a removed job no longer dedupes. */
export const checkinsWindowJob = defineJob({
  name: 'checkins-window',
  queue: QUEUES.checkinsWindow,
  payload: windowPayload,
  schedules: () => [],
  async process(context, window) {
    const outcome = await pageWindow(context.deps, window);
    if (outcome.status === 'split') {
      await enqueueWindows(
        context.queue(QUEUES.checkinsWindow),
        outcome.parts.map((part) => ({ ...part, generation: 0 })),
      );
    }
    await updateWatermark(context.deps);
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
  },
});

type Enqueueable = Window & { generation: number };

/** Job ids carry the row's last change so a window re-opened later (look-back, repair) gets a new job. */
export async function enqueueWindows(
  queue: Queue,
  windows: ReadonlyArray<SyncWindow | Enqueueable>,
): Promise<number> {
  const jobs = windows.map((item) => {
    const window = 'window_start' in item ? windowOf(item) : { start: item.start, end: item.end };
    const generation = 'window_start' in item ? item.updated_at.getTime() : item.generation;
    return {
      name: checkinsWindowJob.name,
      data: window,
      opts: { jobId: `w-${windowKey(window)}-${generation}`, ...JOB_OPTIONS },
    };
  });
  for (let i = 0; i < jobs.length; i += 500) await queue.addBulk(jobs.slice(i, i + 500));
  return jobs.length;
}

/**
 * Hands windows to the workers from a one-shot command (`verify --repair`): enqueueWindows, as the
 * planner job does, on the window queue opened for this call only.
 */
export async function enqueueWindowsFor(
  config: Config,
  redis: RedisClient,
  windows: ReadonlyArray<SyncWindow | Enqueueable>,
): Promise<number> {
  const queue = createQueue(config, redis, QUEUES.checkinsWindow);
  try {
    return await enqueueWindows(queue, windows);
  } finally {
    await queue.close();
  }
}
