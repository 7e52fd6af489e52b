import type { Queue } from 'bullmq';
import { z } from 'zod';
import type { Config } from '../src/config/config.js';
import { runStreamPass } from '../src/streams/passes.js';
import { STREAMS, followUpsOf, streamEnabled } from '../src/streams/registry.js';
import { STREAM_NAMES, type StreamName } from '../src/sync/stream-facts.js';
import { defineJob } from '../src/worker/job-definition.js';
import { exponentialBackoffMs } from '../src/sync/backoff.js';
import { JOB_OPTIONS, QUEUES } from '../src/worker/queues.js';
import { TryLaterError } from '../src/worker/try-later-error.js';

const payload = z.object({
  stream: z.enum(STREAM_NAMES),
  catchUp: z.boolean().optional(),
  /** How many times this catch-up found its stream busy (it waits longer each time). */
  busyTries: z.number().int().nonnegative().optional(),
});

/**
 * The streams the worker runs as one `stream-pass` job each, with their intervals: those the
 * registry has `scheduledBy: 'stream-pass'` (the check-in feed has its planner, checkins-plan.ts).
 */
export function scheduledPasses(config: Config): Array<{ stream: StreamName; everyMs: number }> {
  return STREAM_NAMES.filter(
    (stream) => STREAMS[stream].scheduledBy === 'stream-pass' && streamEnabled(config, stream),
  ).map((stream) => ({ stream, everyMs: STREAMS[stream].everyMs(config) }));
}

/** A catch-up that finds its stream busy waits 2 s, 4 s, … 32 s, then gives way to the schedule. */
export const CATCH_UP_BUSY_TRIES = 6;
const CATCH_UP_BUSY_DELAY_MS = 2_000;

/** One pass of a stream the registry schedules as a whole pass, under the stream's lease. */
export const streamPassJob = defineJob<z.infer<typeof payload>>({
  name: 'stream-pass',
  queue: QUEUES.streams,
  payload,
  schedules: (config) =>
    scheduledPasses(config).map(({ stream, everyMs }) => ({
      id: `stream-${stream}`,
      everyMs,
      data: { stream },
    })),
  async process(context, { stream, catchUp, busyTries = 0 }) {
    // A scheduled pass may use the time until the next one; a catch-up does one round.
    const slotMs = catchUp === true ? undefined : STREAMS[stream].everyMs(context.deps.config);
    const result = await runStreamPass(context.deps, stream, slotMs === undefined ? {} : { slotMs });
    // A catch-up that finds the stream busy may be behind a pass that started before the data it
    // is for existed: run it again shortly rather than drop it. Past its tries the stream's own
    // schedule covers it.
    const busy = result.status === 'skipped' || result.status === 'lease-lost';
    if (catchUp === true && busy && busyTries + 1 < CATCH_UP_BUSY_TRIES) {
      const delayMs = exponentialBackoffMs(busyTries + 1, CATCH_UP_BUSY_DELAY_MS, 60_000);
      throw new TryLaterError(`${stream} is busy; catch-up runs again in ${delayMs} ms`, delayMs, {
        stream,
        catchUp,
        busyTries: busyTries + 1,
      });
    }
    if ('runId' in result && result.status === 'failed')
      throw new Error(result.error ?? `${stream} pass failed`);
    if ('runId' in result) {
      for (const next of followUpsOf(context.deps.config, stream, result.followUps)) {
        await enqueueCatchUp(context.queue(QUEUES.streams), next);
      }
    }
    return result;
  },
});

/**
 * One extra pass of a stream, now. The fixed job id makes BullMQ ignore the request while the
 * last catch-up is waiting, running or kept as completed (an hour), so this never floods.
 */
export async function enqueueCatchUp(queue: Queue, stream: StreamName): Promise<void> {
  await queue.add(
    streamPassJob.name,
    { stream, catchUp: true },
    { jobId: `catchup-${stream}`, ...JOB_OPTIONS },
  );
}
