import { z } from 'zod';
import type { Config } from '../src/config.js';
import { runStreamPass } from '../src/streams/passes.js';
import { STREAM_NAMES, type StreamName } from '../src/streams/stream.js';
import { defineJob } from './job.js';
import { QUEUES } from './queues.js';

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
  payload: z.object({ stream: z.enum(STREAM_NAMES) }),
  schedules: (config) =>
    SCHEDULED.filter(({ stream }) => stream !== 'payment_intents' || config.oauth !== undefined).map(
      ({ stream, every }) => ({ id: `stream-${stream}`, everyMs: every(config), data: { stream } }),
    ),
  async process(context, { stream }) {
    const result = await runStreamPass(context.deps, stream);
    if ('runId' in result && result.status === 'failed')
      throw new Error(result.error ?? `${stream} pass failed`);
    return result;
  },
});
