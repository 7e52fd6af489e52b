import type { Queue } from 'bullmq';
import { z } from 'zod';
import type { Config } from '../src/config.js';
import { runStreamPass } from '../src/streams/passes.js';
import { STREAM_NAMES, type StreamName } from '../src/streams/stream.js';
import { defineJob } from './job.js';
import { JOB_RETENTION, QUEUES } from './queues.js';

// The check-in stream is scheduled through its planner (windows are jobs of their own).
const SCHEDULED: Array<{ stream: Exclude<StreamName, 'checkins'>; every: (config: Config) => number }> = [
  { stream: 'restaurants', every: (c) => c.schedules.restaurantsMs },
  { stream: 'locations', every: (c) => c.schedules.locationsMs },
  { stream: 'challenges', every: (c) => c.schedules.challengesMs },
  { stream: 'balance', every: (c) => c.schedules.balanceMs },
  { stream: 'payment_intents', every: (c) => c.schedules.paymentIntentsMs },
  { stream: 'alerts', every: (c) => c.schedules.alertsMs },
];

/** One pass of a snapshot, payment-intent or alert stream, under the stream's advisory lock. */
export const streamPassJob = defineJob({
  name: 'stream-pass',
  queue: QUEUES.streams,
  payload: z.object({ stream: z.enum(STREAM_NAMES), catchUp: z.boolean().optional() }),
  schedules: (config) =>
    SCHEDULED.filter(({ stream }) => stream !== 'payment_intents' || config.oauth !== undefined).map(
      ({ stream, every }) => ({ id: `stream-${stream}`, everyMs: every(config), data: { stream } }),
    ),
  async process(context, { stream, catchUp }) {
    const result = await runStreamPass(context.deps, stream);
    // A catch-up that finds the stream busy may be behind a pass that started before the data it
    // is for existed: try again shortly (BullMQ attempts with backoff) rather than drop it.
    if (catchUp === true && result.status === 'skipped')
      throw new Error(`${stream} is busy; catch-up retried`);
    if ('runId' in result && result.status === 'failed')
      throw new Error(result.error ?? `${stream} pass failed`);
    // New restaurants have challenges to read: do not leave them for the next hourly tick.
    if (stream === 'restaurants' && 'runId' in result && Number(result.details?.['new'] ?? 0) > 0) {
      await enqueueCatchUp(context.queue(QUEUES.streams), 'challenges');
    }
    return result;
  },
});

/**
 * One extra pass of a stream, now. The fixed job id makes BullMQ ignore the request while the
 * last catch-up is waiting, running or kept as completed (an hour), so this never floods.
 */
export async function enqueueCatchUp(queue: Queue, stream: 'challenges' | 'locations'): Promise<void> {
  await queue.add(
    streamPassJob.name,
    { stream, catchUp: true },
    {
      jobId: `catchup-${stream}`,
      attempts: 6,
      backoff: { type: 'exponential', delay: 2_000 },
      ...JOB_RETENTION,
    },
  );
}
