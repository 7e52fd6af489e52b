import type { Queue } from 'bullmq';
import type { z } from 'zod';
import type { PartnerApi } from '../api/partner-api.js';
import type { Config } from '../config/config.js';
import type { StreamDeps } from '../streams/stream.js';
import type { QueueName } from './queues.js';

export interface JobContext {
  deps: StreamDeps<PartnerApi>;
  /** For jobs that enqueue other jobs (the planner enqueues windows). */
  queue(name: QueueName): Queue;
}

/**
 * A kind of job: where it runs, what its payload looks like (validated before processing, and
 * never holding a secret), how often it is scheduled, and what it does.
 */
export interface JobDefinition<Payload> {
  name: string;
  queue: QueueName;
  payload: z.ZodType<Payload>;
  /** Job Schedulers to register at worker start-up: id, interval and payload. Same in every process. */
  schedules(config: Config): Array<{ id: string; everyMs: number; data: Payload }>;
  process(context: JobContext, payload: Payload): Promise<unknown>;
}

export function defineJob<Payload>(definition: JobDefinition<Payload>): JobDefinition<Payload> {
  return definition;
}

/**
 * The jobs a worker runs and how many of each queue at once: given to the worker by its caller
 * (jobs/registry.ts: JOB_SET), so the runtime in src/worker never imports the jobs above it.
 */
export interface JobSet {
  jobs: Readonly<Record<string, JobDefinition<unknown>>>;
  concurrency: Readonly<Record<QueueName, number>>;
}
