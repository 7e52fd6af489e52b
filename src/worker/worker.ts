import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { JOBS, QUEUE_CONCURRENCY } from '../../jobs/registry.js';
import { ALL_QUEUES, JOB_RETENTION, type QueueName } from '../../jobs/queues.js';
import type { JobContext } from '../../jobs/job.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { createPipelineRuntime, type PipelineRuntime } from '../runtime/pipeline.js';

const SCHEDULE_CHECK_MS = 30_000;

export interface RunningWorker {
  runtime: PipelineRuntime;
  queues: Map<QueueName, Queue>;
  /** Stops taking jobs, lets active ones finish (or releases them at the deadline), closes everything. */
  stop(deadlineMs?: number): Promise<void>;
}

export function createQueues(config: Config, connection: Redis): Map<QueueName, Queue> {
  return new Map(
    ALL_QUEUES.map((name) => [name, new Queue(name, { connection, prefix: config.redisPrefix })]),
  );
}

/**
 * Registers every Job Scheduler from configuration. Idempotent: upsert by id, same in every process.
 * With `onlyMissing`, only schedulers Redis no longer has are added back (a Redis restart without
 * persistence loses them; re-upserting a present one could move its next run).
 */
export async function registerSchedules(
  config: Config,
  queues: Map<QueueName, Queue>,
  options: { onlyMissing?: boolean } = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (const job of Object.values(JOBS)) {
    for (const schedule of job.schedules(config)) {
      const queue = queues.get(job.queue);
      if (queue === undefined) throw new Error(`no queue ${job.queue}`);
      if (options.onlyMissing === true && (await queue.getJobScheduler(schedule.id)) !== undefined) continue;
      await queue.upsertJobScheduler(
        schedule.id,
        { every: schedule.everyMs },
        { name: job.name, data: schedule.data, opts: { ...JOB_RETENTION, attempts: 1 } },
      );
      ids.push(schedule.id);
    }
  }
  return ids;
}

export async function startWorker(options: {
  config: Config;
  logger: Logger;
  clock?: Clock;
}): Promise<RunningWorker> {
  const { config, logger } = options;
  const runtime = createPipelineRuntime({
    config,
    logger,
    applicationName: 'rewards-etl worker',
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const connection = connectQueueRedis(config, logger);
  const queues = createQueues(config, connection);
  const scheduled = await registerSchedules(config, queues);
  logger.info({ schedules: scheduled }, 'job schedules registered');

  const workers = ALL_QUEUES.map((queueName) =>
    startQueueWorker({ queueName, config, logger, runtime, queues, connection }),
  );
  logger.info({ queues: ALL_QUEUES, concurrency: QUEUE_CONCURRENCY }, 'worker started');
  const stopScheduleGuard = guardSchedules(config, queues, connection, logger);

  let stopping: Promise<void> | undefined;
  return {
    runtime,
    queues,
    stop(deadlineMs = 30_000) {
      stopping ??= (async () => {
        stopScheduleGuard();
        logger.info({ deadlineMs }, 'stopping: no new jobs; waiting for active ones');
        await closeWorkers(workers, deadlineMs, logger);
        await Promise.all([...queues.values()].map((queue) => queue.close()));
        await runtime.close();
        connection.disconnect();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}

/**
 * BullMQ's production guide: maxRetriesPerRequest null on worker connections, so a Redis
 * restart pauses the worker until it reconnects instead of failing its commands.
 */
function connectQueueRedis(config: Config, logger: Logger): Redis {
  const connection = new Redis(config.redisUrl.reveal(), { maxRetriesPerRequest: null });
  connection.on('error', (error: Error) => logger.warn({ err: error }, 'redis (queues) connection error'));
  return connection;
}

/** Runs a job through its registered definition, with the runtime's dependencies and the job's logger. */
function processJob(runtime: PipelineRuntime, queues: Map<QueueName, Queue>, logger: Logger) {
  return async (job: Job, _token?: string, signal?: AbortSignal): Promise<unknown> => {
    const definition = JOBS[job.name];
    if (definition === undefined) throw new Error(`unknown job ${job.name}`);
    const payload: unknown = definition.payload.parse(job.data);
    const context: JobContext = {
      deps: {
        ...runtime.deps,
        logger: logger.child({ job: job.name, jobId: job.id }),
        ...(signal ? { signal } : {}),
      },
      queue: (name) => {
        const queue = queues.get(name);
        if (queue === undefined) throw new Error(`no queue ${name}`);
        return queue;
      },
    };
    return definition.process(context, payload);
  };
}

function startQueueWorker(options: {
  queueName: QueueName;
  config: Config;
  logger: Logger;
  runtime: PipelineRuntime;
  queues: Map<QueueName, Queue>;
  connection: Redis;
}): Worker {
  const { queueName, config, logger } = options;
  const worker = new Worker(queueName, processJob(options.runtime, options.queues, logger), {
    connection: options.connection,
    prefix: config.redisPrefix,
    concurrency: QUEUE_CONCURRENCY[queueName],
    // A worker that died holding a job: the job goes back to waiting once its lock expires
    // (renewed every lockDuration / 2 while the worker lives). Short, so a kill -9 costs
    // seconds, not minutes; the window's advisory lock, not this one, prevents double paging.
    lockDuration: 20_000,
    stalledInterval: 10_000,
    maxStalledCount: 3,
  });
  worker.on('error', (error) => logger.error({ err: error, queue: queueName }, 'worker error'));
  worker.on('failed', (job, error) =>
    logger.warn({ err: error, job: job?.name, jobId: job?.id }, 'job failed'),
  );
  return worker;
}

/**
 * Schedules are data in Redis; after a Redis restart they are gone. Puts back what is missing, at
 * once when the connection comes back and periodically (another process's connection may have
 * been the one that saw the restart). The work itself is not lost with them: what is due is read
 * from Postgres on the next tick. Returns the function that stops guarding.
 */
function guardSchedules(
  config: Config,
  queues: Map<QueueName, Queue>,
  connection: Redis,
  logger: Logger,
): () => void {
  const restoreSchedules = () => {
    registerSchedules(config, queues, { onlyMissing: true })
      .then((restored) => {
        if (restored.length > 0) {
          logger.warn({ schedules: restored }, 'job schedules were missing (Redis restarted?); restored');
        }
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'could not check job schedules'));
  };
  connection.on('ready', restoreSchedules);
  const timer = setInterval(restoreSchedules, SCHEDULE_CHECK_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    connection.off('ready', restoreSchedules);
  };
}

/**
 * Stops taking jobs and waits for active ones up to the deadline; past it, aborts them (a window
 * hands its checkpoint back as pending, a pass ends early) and closes the workers by force.
 */
async function closeWorkers(workers: Worker[], deadlineMs: number, logger: Logger): Promise<void> {
  const graceful = Promise.all(workers.map((worker) => worker.close()));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), deadlineMs);
  });
  if ((await Promise.race([graceful.then(() => 'done' as const), deadline])) === 'deadline') {
    logger.warn('deadline reached: releasing active jobs');
    for (const worker of workers) worker.cancelAllJobs('worker shutting down');
    await Promise.race([graceful, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    await Promise.all(workers.map((worker) => worker.close(true)));
  }
  clearTimeout(timer);
}
