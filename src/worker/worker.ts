import { DelayedError, Queue, Worker, type Job, type WorkerOptions } from 'bullmq';
import { TryLaterError } from './try-later-error.js';
import { ALL_QUEUES, type QueueName } from './queues.js';
import { createQueues, registerSchedules } from './queue-setup.js';
import type { JobContext, JobSet } from './job-definition.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import { describeRedis } from '../redis/settings.js';
import { createRedisClient, type RedisClient } from '../redis/connection.js';
import { heapLimitMiB } from '../runtime/heap-policy.js';
import { createPipelineRuntime, type PipelineRuntime } from '../runtime/pipeline.js';
import {
  createJobTracker,
  newWorkerId,
  startLivenessWatchdog,
  type JobTracker,
  type LivenessReport,
  type LivenessWatchdog,
} from './liveness.js';
import { withErrorReason } from './job-signal.js';
import { logWindowPaged } from './job-log.js';

const SCHEDULE_CHECK_MS = 30_000;

export interface RunningWorker {
  runtime: PipelineRuntime;
  queues: Map<QueueName, Queue>;
  /** Whether every queue worker takes the jobs it could (for /readyz); see liveness.ts. */
  liveness(): LivenessReport;
  /** Stops taking jobs, lets active ones finish (or releases them at the deadline), closes everything. */
  stop(deadlineMs?: number): Promise<void>;
  /**
   * After a stuck verdict: lets active jobs finish up to the deadline (then releases them), and
   * drops every queue connection without waiting on it (a graceful close would wait on the dead one).
   */
  abandon(deadlineMs: number): Promise<void>;
}

export interface StartWorkerOptions {
  config: Config;
  logger: Logger;
  /** The jobs to run (jobs/registry.ts: JOB_SET). */
  jobs: JobSet;
  clock?: Clock;
  /**
   * A queue worker took no job it could for WORKER_IDLE_TIMEOUT: its fetch loop went silent, or it
   * left ready jobs waiting (a dead connection after a failover, say). The worker command stops
   * and exits 1 so the supervisor starts a fresh process.
   */
  onStuck?: (report: LivenessReport) => void;
  /** The HTTP port the command bound before starting the worker (shown by `status`). */
  httpPort?: number;
}

/** What a running worker holds, for stopping it. */
interface WorkerParts {
  runtime: PipelineRuntime;
  queues: Map<QueueName, Queue>;
  connection: RedisClient;
  workers: Worker[];
  watchdog: LivenessWatchdog;
  tracker: JobTracker;
  stopScheduleGuard: () => void;
  logger: Logger;
}

export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const { config, logger } = options;
  const runtime = createPipelineRuntime({
    config,
    logger,
    applicationName: 'rewards-etl worker',
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  // Work starts on Postgres's time, not this host's (docs/running-in-production.md, "One clock").
  await runtime.clockReady();
  const connection = connectQueueRedis(config, logger);
  const queues = createQueues(config, connection);
  const scheduled = await registerSchedules(config, queues, options.jobs);
  logger.info({ schedules: scheduled }, 'job schedules registered');

  const tracker = createJobTracker();
  const workerId = newWorkerId();
  const workers = ALL_QUEUES.map((queueName) =>
    startQueueWorker({
      queueName,
      config,
      logger,
      runtime,
      queues,
      connection,
      tracker,
      workerId,
      jobs: options.jobs,
    }),
  );
  const watchdog = watchLiveness(options, runtime, tracker, workerId);
  const redis = describeRedis(config.redis);
  const started = { queues: ALL_QUEUES, concurrency: options.jobs.concurrency, workerId, redis };
  // The heap limit says whether the shipped heap policy is on (src/runtime/heap-policy.ts).
  logger.info({ ...started, heapLimitMiB: heapLimitMiB() }, 'worker started');
  const stopScheduleGuard = guardSchedules(config, queues, options.jobs, connection, logger);
  const parts: WorkerParts = {
    runtime,
    queues,
    connection,
    workers,
    watchdog,
    tracker,
    stopScheduleGuard,
    logger,
  };

  let stopping: Promise<void> | undefined;
  return {
    runtime,
    queues,
    liveness: () => watchdog.report(),
    stop(deadlineMs = 30_000) {
      return (stopping ??= stopGracefully(parts, deadlineMs));
    },
    abandon(deadlineMs) {
      return (stopping ??= abandonStuck(parts, deadlineMs));
    },
  };
}

function watchLiveness(
  options: StartWorkerOptions,
  runtime: PipelineRuntime,
  tracker: JobTracker,
  workerId: string,
): LivenessWatchdog {
  const { config, logger } = options;
  return startLivenessWatchdog({
    redis: runtime.redis,
    prefix: config.redisPrefix,
    queues: ALL_QUEUES,
    concurrency: options.jobs.concurrency,
    tracker,
    idleTimeoutMs: config.worker.idleTimeoutMs,
    workerId,
    ...(options.httpPort === undefined ? {} : { httpPort: options.httpPort }),
    logger,
    onStuck: (report) => {
      logger.error(
        { queues: report.stuckQueues, idleTimeoutMs: config.worker.idleTimeoutMs },
        'queue worker stuck: its fetch loop stopped, or it leaves ready jobs waiting (dead Redis connection?)',
      );
      options.onStuck?.(report);
    },
    redisUnreachableTimeoutMs: config.worker.redisUnreachableTimeoutMs,
    onRedisUnreachable: (report, stalledMs) => {
      logger.error(
        { stalledMs, redisUnreachableTimeoutMs: config.worker.redisUnreachableTimeoutMs },
        `redis unreachable for ${Math.round(stalledMs / 1000)} s with no job progress (WORKER_REDIS_UNREACHABLE_TIMEOUT): exiting with status 1 so the supervisor starts a fresh worker`,
      );
      options.onStuck?.(report);
    },
  });
}

async function stopGracefully(parts: WorkerParts, deadlineMs: number): Promise<void> {
  const { logger } = parts;
  parts.stopScheduleGuard();
  await parts.watchdog.stop();
  logger.info({ deadlineMs }, 'stopping: no new jobs; waiting for active ones');
  await closeWorkers(parts.workers, deadlineMs, logger);
  await Promise.all([...parts.queues.values()].map((queue) => queue.close()));
  await parts.runtime.close();
  parts.connection.disconnect();
  logger.info('stopped');
}

async function abandonStuck(parts: WorkerParts, deadlineMs: number): Promise<void> {
  const { logger, workers, tracker } = parts;
  const activeJobs = () => ALL_QUEUES.reduce((sum, queue) => sum + tracker.snapshot(queue).active, 0);
  parts.stopScheduleGuard();
  await parts.watchdog.stop();
  await until(() => activeJobs() === 0, deadlineMs);
  if (activeJobs() > 0) {
    logger.warn({ active: activeJobs() }, 'deadline reached: releasing active jobs');
    for (const worker of workers) worker.cancelAllJobs('worker stuck: restarting');
    await until(() => activeJobs() === 0, 5_000);
  }
  parts.connection.disconnect();
  const dropped = [...workers, ...parts.queues.values()].map((item) => item.disconnect());
  await Promise.race([Promise.allSettled(dropped), new Promise((resolve) => setTimeout(resolve, 2_000))]);
  await parts.runtime.close();
  logger.info('stopped (stuck)');
}

/** Resolves when `done()` holds or after `ms`, checking every 100 ms. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const giveUpAt = Date.now() + ms;
  while (!done() && Date.now() < giveUpAt) await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * BullMQ's production guide: maxRetriesPerRequest null on worker connections, so a Redis
 * restart or failover pauses the worker until it reconnects instead of failing its commands.
 * BullMQ duplicates this client for each Worker's blocking connection.
 */
function connectQueueRedis(config: Config, logger: Logger): RedisClient {
  return createRedisClient(config.redis, {
    role: 'long-lived',
    logger: logger.child({ connection: 'queues' }),
    connectionName: 'rewards-etl worker queues',
  });
}

/** Runs a job through its registered definition, with the runtime's dependencies and the job's logger. */
function processJob(
  runtime: PipelineRuntime,
  queues: Map<QueueName, Queue>,
  logger: Logger,
  queueName: QueueName,
  tracker: JobTracker,
  jobSet: JobSet,
) {
  return async (job: Job, token?: string, signal?: AbortSignal): Promise<unknown> => {
    tracker.started(queueName);
    try {
      return await runJob(runtime, queues, jobSet, logger, job, signal);
    } catch (error) {
      if (!(error instanceof TryLaterError)) throw error;
      // BullMQ's documented way to run a job again later without counting a failed attempt.
      logger.info({ job: job.name, jobId: job.id, delayMs: error.delayMs }, error.message);
      if (error.nextPayload !== undefined) await job.updateData(error.nextPayload);
      await job.moveToDelayed(Date.now() + error.delayMs, token);
      throw new DelayedError();
    } finally {
      tracker.finished(queueName);
    }
  };
}

async function runJob(
  runtime: PipelineRuntime,
  queues: Map<QueueName, Queue>,
  jobSet: JobSet,
  logger: Logger,
  job: Job,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const definition = jobSet.jobs[job.name];
  if (definition === undefined) throw new Error(`unknown job ${job.name}`);
  const payload: unknown = definition.payload.parse(job.data);
  const context: JobContext = {
    deps: {
      ...runtime.deps,
      logger: logger.child({ job: job.name, jobId: job.id }),
      ...(signal ? { signal: withErrorReason(signal) } : {}),
    },
    queue: (name) => {
      const queue = queues.get(name);
      if (queue === undefined) throw new Error(`no queue ${name}`);
      return queue;
    },
  };
  const startedAt = Date.now();
  const result = await definition.process(context, payload);
  logWindowPaged(context.deps.logger, result, Date.now() - startedAt);
  return result;
}

function startQueueWorker(options: {
  queueName: QueueName;
  config: Config;
  logger: Logger;
  runtime: PipelineRuntime;
  queues: Map<QueueName, Queue>;
  connection: RedisClient;
  tracker: JobTracker;
  workerId: string;
  jobs: JobSet;
}): Worker {
  const { queueName, config, logger } = options;
  const processor = processJob(
    options.runtime,
    options.queues,
    logger,
    queueName,
    options.tracker,
    options.jobs,
  );
  const worker = new WatchedWorker(() => options.tracker.fetched(queueName), queueName, processor, {
    connection: options.connection,
    // Shown as the job's processedBy: which process ran it.
    name: options.workerId,
    prefix: config.redisPrefix,
    concurrency: options.jobs.concurrency[queueName],
    // A worker that died holding a job: the job goes back to waiting once its lock expires
    // (renewed every lockDuration / 2 while the worker lives). Short, so a kill -9 costs
    // seconds, not minutes; the window's lease in Postgres, not this one, prevents double paging.
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
 * A BullMQ Worker that reports each completed fetch (moveToActive: the round trip after a blocking
 * wait, or a direct fetch), so the liveness watchdog can tell a loop that stopped from one that
 * has nothing to do. moveToActive is a protected extension point of BullMQ's Worker.
 */
class WatchedWorker extends Worker {
  // Set right after super(): the loop BullMQ starts in its constructor fetches only after awaits.
  private onFetch: (() => void) | undefined;

  constructor(
    onFetch: () => void,
    name: string,
    processor: (job: Job, token?: string, signal?: AbortSignal) => Promise<unknown>,
    options: WorkerOptions,
  ) {
    super(name, processor, options);
    this.onFetch = onFetch;
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job> {
    const job = await super.moveToActive(token, name);
    this.onFetch?.();
    return job;
  }
}

/**
 * Schedules are data in Redis; a Redis restart loses them, a failover can lose a scheduler's next
 * job. Puts back what would not fire again, at once when the connection comes back and
 * periodically (another process's connection may have been the one that saw the restart). The work itself is not lost with them: what is due is read
 * from Postgres on the next tick. Returns the function that stops guarding.
 */
function guardSchedules(
  config: Config,
  queues: Map<QueueName, Queue>,
  jobSet: JobSet,
  connection: RedisClient,
  logger: Logger,
): () => void {
  const restoreSchedules = () => {
    registerSchedules(config, queues, jobSet, { onlyRepair: true })
      .then((restored) => {
        if (restored.length > 0) {
          logger.warn(
            { schedules: restored },
            'job schedules would not fire again (Redis restarted or failed over?); restored',
          );
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
