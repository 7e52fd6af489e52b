import { checkinsPlanJob } from './checkins-plan.js';
import { checkinsWindowJob } from './checkins-window.js';
import { CHECKINS_TUNING } from '../src/streams/checkins/tuning.js';
import type { JobDefinition, JobSet } from '../src/worker/job-definition.js';
import { QUEUES, type QueueName } from '../src/worker/queues.js';
import { streamPassJob } from './stream-pass.js';

/** Every job the worker knows, by name. */
export const JOBS: Record<string, JobDefinition<unknown>> = {
  [checkinsPlanJob.name]: checkinsPlanJob,
  [checkinsWindowJob.name]: checkinsWindowJob,
  [streamPassJob.name]: streamPassJob,
};

/** How many jobs of each queue one worker process runs at once. */
export const QUEUE_CONCURRENCY: Record<QueueName, number> = {
  [QUEUES.checkinsPlan]: 1,
  [QUEUES.checkinsWindow]: CHECKINS_TUNING.windowsInFlight,
  [QUEUES.streams]: 3,
};

/** What `rewards-etl worker` runs. */
export const JOB_SET: JobSet = { jobs: JOBS, concurrency: QUEUE_CONCURRENCY };
