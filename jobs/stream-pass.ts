import type { Queue } from 'bullmq';
import { z } from 'zod';
import { runStreamPass } from '../src/streams/passes.js';
import {
  STREAMS,
  STREAM_NAMES,
  followUpsOf,
  scheduledPasses,
  type StreamName,
} from '../src/streams/registry.js';
import { defineJob } from './job.js';
import { JOB_RETENTION, QUEUES } from './queues.js';

const payload = z.object({ stream: z.enum(STREAM_NAMES), catchUp: z.boolean().optional() });

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
  async process(context, { stream, catchUp }) {
    // A scheduled pass may use the time until the next one; a catch-up does one round.
    const slotMs = catchUp === true ? undefined : STREAMS[stream].everyMs(context.deps.config);
    const result = await runStreamPass(context.deps, stream, slotMs === undefined ? {} : { slotMs });
    // A catch-up that finds the stream busy may be behind a pass that started before the data it
    // is for existed: try again shortly (BullMQ attempts with backoff) rather than drop it.
    if (catchUp === true && (result.status === 'skipped' || result.status === 'lease-lost'))
      throw new Error(`${stream} is busy; catch-up retried`);
    if ('runId' in result && result.status === 'failed')
      throw new Error(result.error ?? `${stream} pass failed`);
    if ('runId' in result) {
      for (const next of followUpsOf(context.deps.config, stream, result)) {
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
    {
      jobId: `catchup-${stream}`,
      attempts: 6,
      backoff: { type: 'exponential', delay: 2_000 },
      ...JOB_RETENTION,
    },
  );
}
