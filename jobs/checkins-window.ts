import type { Queue } from 'bullmq';
import { z } from 'zod';
import type { Window } from '../src/sync/windows.js';
import type { SyncWindow } from '../src/warehouse/schema.js';
import {
  CHECKINS_WINDOW_JOB,
  enqueueWindows as enqueueWindowJobs,
  pageQueuedWindow,
} from '../src/streams/checkins/window-jobs.js';
import { defineJob } from '../src/worker/job-definition.js';
import { JOB_OPTIONS, QUEUES } from '../src/worker/queues.js';

const windowPayload = z
  .object({ start: z.number().int(), end: z.number().int() })
  .refine((w) => w.start < w.end, 'start must be before end');

/** Pages one window (src/streams/checkins/window-jobs.ts). */
export const checkinsWindowJob = defineJob({
  name: CHECKINS_WINDOW_JOB,
  queue: QUEUES.checkinsWindow,
  payload: windowPayload,
  schedules: () => [],
  process: (context, window) =>
    pageQueuedWindow(context.deps, window, () => context.queue(QUEUES.checkinsWindow), JOB_OPTIONS),
});

/** Hands windows to the window queue with the options every job is given. */
export function enqueueWindows(
  queue: Queue,
  windows: ReadonlyArray<SyncWindow | (Window & { generation: number })>,
): Promise<number> {
  return enqueueWindowJobs(queue, windows, JOB_OPTIONS);
}
