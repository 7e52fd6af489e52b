import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import type { QueueName } from './queues.js';
import type { Logger } from '../log.js';
import type { RedisClient } from '../redis/connection.js';
import { withTimeout } from '../with-timeout.js';
import { FRESH_WATCH, watchQueue, type QueueWatch } from './idle-watch.js';
import { FRESH_OUTAGE_WATCH, watchRedisOutage, type OutageWatch } from '../redis/outage-watch.js';
import { workersKey, type WorkerRecord, type WorkerQueueRecord } from './worker-records.js';

// The liveness watchdog of one worker process: every few seconds it asks Redis, through the
// runtime's own connection (not the queues' one, which may be the dead one), how many jobs are
// ready in each queue, compares that with what this process's workers started (idle-watch.ts), and
// publishes the result where `status` and other hosts can read it (worker-records.ts).

/** What the process's queue workers did, per queue: jobs (the job wrapper) and fetches (the loop). */
export interface JobTracker {
  started(queue: QueueName): void;
  finished(queue: QueueName): void;
  /** The worker's fetch loop completed a round trip (see WatchedWorker in worker.ts). */
  fetched(queue: QueueName): void;
  snapshot(queue: QueueName): TrackedQueue;
}

interface TrackedQueue {
  active: number;
  started: number;
  lastStartedAt: number | null;
  fetches: number;
  lastFetchAt: number | null;
}

export function createJobTracker(now: () => number = Date.now): JobTracker {
  const counts = new Map<QueueName, TrackedQueue>();
  const of = (queue: QueueName) => {
    let entry = counts.get(queue);
    if (entry === undefined) {
      entry = { active: 0, started: 0, lastStartedAt: null, fetches: 0, lastFetchAt: null };
      counts.set(queue, entry);
    }
    return entry;
  };
  return {
    fetched(queue) {
      const entry = of(queue);
      entry.fetches++;
      entry.lastFetchAt = now();
    },
    started(queue) {
      const entry = of(queue);
      entry.active++;
      entry.started++;
      entry.lastStartedAt = now();
    },
    finished(queue) {
      const entry = of(queue);
      entry.active = Math.max(0, entry.active - 1);
    },
    snapshot: (queue) => ({ ...of(queue) }),
  };
}

export interface LivenessReport {
  /** False once any queue's worker is stuck (idle with jobs ready for longer than the timeout). */
  ok: boolean;
  stuckQueues: QueueName[];
  record: WorkerRecord;
}

export interface LivenessWatchdog {
  report(): LivenessReport;
  /** Stops checking and removes this process's record (a clean stop is not a dead worker). */
  stop(): Promise<void>;
}

/** How often the queues are read and the record published. */
export const LIVENESS_INTERVAL_MS = 5_000;
/** A delayed job (a schedule's next run) this overdue counts as ready: BullMQ promotes due ones as it polls. */
const OVERDUE_GRACE_MS = 2_000;
const READ_TIMEOUT_MS = 3_000;
/** Records outlive their worker this long in Redis (readers ignore ones not refreshed recently). */
const RECORD_KEY_TTL_MS = 86_400_000;

export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export interface LivenessOptions {
  redis: RedisClient;
  prefix: string;
  queues: readonly QueueName[];
  concurrency: Record<QueueName, number>;
  tracker: JobTracker;
  idleTimeoutMs: number;
  workerId: string;
  /** The bound HTTP port, written into the worker record `status` shows. */
  httpPort?: number;
  logger: Logger;
  /** Called once, when the first queue is found stuck. */
  onStuck: (report: LivenessReport) => void;
  /** Redis unreachable with no job progress this long (outage-watch.ts): onRedisUnreachable, once. */
  redisUnreachableTimeoutMs?: number;
  onRedisUnreachable?: (report: LivenessReport, stalledMs: number) => void;
  intervalMs?: number;
  now?: () => number;
}

/** What a worker record says about the process itself, unchanged while it runs. */
function identity(options: LivenessOptions, startedAt: string) {
  return {
    id: options.workerId,
    host: hostname(),
    pid: process.pid,
    startedAt,
    idleTimeoutSeconds: options.idleTimeoutMs / 1000,
    // HTTP_PORT=0 picks a port: `status` shows which (issue 40).
    ...(options.httpPort === undefined ? {} : { httpPort: options.httpPort }),
  };
}

export function startLivenessWatchdog(options: LivenessOptions): LivenessWatchdog {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const startedAt = new Date(now()).toISOString();
  const readers = queueReaders(options);
  const watches = new Map<QueueName, QueueWatch>(options.queues.map((name) => [name, FRESH_WATCH]));
  let queueRecords = options.queues.map((queue) => unwatchedQueueRecord(queue, options.concurrency[queue]));
  let stuckQueues: QueueName[] = [];
  let told = false;
  let stopped = false;
  const outage = outageTracker(options);

  const record = (): WorkerRecord => ({
    ...identity(options, startedAt),
    seenAt: new Date(now()).toISOString(),
    stuck: stuckQueues.length > 0,
    queues: queueRecords,
  });
  const report = (): LivenessReport => ({
    ok: stuckQueues.length === 0 && !outage.cutOff(),
    stuckQueues,
    record: record(),
  });
  const publish = () => publishRecord(options, record());

  async function check(): Promise<void> {
    const ready = await Promise.all(readers.map((reader) => readyJobs(reader, now, logger)));
    queueRecords = observeQueues(options, watches, ready, now());
    // Once stuck, stays stuck: the process is on its way out (see the worker command).
    const nowStuck = options.queues.filter((_, i) => queueRecords[i]?.stuck === true);
    stuckQueues = [...new Set([...stuckQueues, ...nowStuck])];
    await publish();
    const stalledMs = outage.observe(ready, now());
    if (stalledMs !== undefined) options.onRedisUnreachable?.(report(), stalledMs);
    if (stuckQueues.length > 0 && !told) {
      told = true;
      options.onStuck(report());
    }
  }

  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(check)
      .catch((error: unknown) => logger.warn({ err: error }, 'liveness check failed'));
  }, options.intervalMs ?? LIVENESS_INTERVAL_MS);
  timer.unref();
  running = publish();

  return {
    report,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
      if (stuckQueues.length === 0) await removeRecord(options);
      await Promise.allSettled(readers.map((reader) => reader.close()));
    },
  };
}

/** The watchdog's readers of each queue, on its own connection; a read that fails counts as unreadable. */
function queueReaders(options: LivenessOptions): Queue[] {
  const readers = options.queues.map(
    (name) => new Queue(name, { connection: options.redis, prefix: options.prefix, skipMetasUpdate: true }),
  );
  for (const reader of readers) reader.on('error', () => undefined);
  return readers;
}

/**
 * Issue 38: Redis unreachable (no queue readable) with no fetch or job started, for the timeout.
 * `observe` returns how long, the first time the verdict falls; `cutOff` stays true after it.
 */
function outageTracker(options: LivenessOptions): {
  observe(ready: readonly (number | null)[], atMs: number): number | undefined;
  cutOff(): boolean;
} {
  let watch: OutageWatch = FRESH_OUTAGE_WATCH;
  let cutOff = false;
  return {
    observe(ready, atMs) {
      const progress = options.queues.reduce((sum, queue) => {
        const seen = options.tracker.snapshot(queue);
        return sum + seen.started + seen.fetches;
      }, 0);
      const reachable = ready.some((count) => count !== null);
      const timeoutMs = options.redisUnreachableTimeoutMs ?? Number.POSITIVE_INFINITY;
      const verdict = watchRedisOutage(watch, { atMs, reachable, progress }, timeoutMs);
      watch = verdict.watch;
      if (!verdict.stuck || cutOff) return undefined;
      cutOff = true;
      return verdict.stalledMs;
    },
    cutOff: () => cutOff,
  };
}

/** Each queue's record after a check: what the process's workers did against what Redis holds ready. */
function observeQueues(
  options: LivenessOptions,
  watches: Map<QueueName, QueueWatch>,
  ready: readonly (number | null)[],
  atMs: number,
): WorkerQueueRecord[] {
  return options.queues.map((queue, i) => {
    const seen = options.tracker.snapshot(queue);
    const concurrency = options.concurrency[queue];
    const readyJobs = ready[i] ?? null;
    const verdict = watchQueue(
      watches.get(queue) ?? FRESH_WATCH,
      { atMs, active: seen.active, concurrency, readyJobs, jobsStarted: seen.started, fetches: seen.fetches },
      options.idleTimeoutMs,
    );
    watches.set(queue, verdict.watch);
    return watchedQueueRecord(queue, concurrency, seen, readyJobs, verdict);
  });
}

/** Jobs a worker could take now in this queue, or null when Redis does not answer in time. */
async function readyJobs(reader: Queue, now: () => number, logger: Logger): Promise<number | null> {
  try {
    const [counts, overdue] = await withTimeout(
      Promise.all([
        reader.getJobCounts('waiting', 'prioritized'),
        reader.getDelayedCount(now() - OVERDUE_GRACE_MS),
      ]),
      READ_TIMEOUT_MS,
      'queue counts',
    );
    return (counts.waiting ?? 0) + (counts.prioritized ?? 0) + overdue;
  } catch (error) {
    logger.debug({ err: error, queue: reader.name }, 'liveness: queue unreadable');
    return null;
  }
}

function unwatchedQueueRecord(queue: QueueName, concurrency: number): WorkerQueueRecord {
  return {
    queue,
    concurrency,
    active: 0,
    jobsStarted: 0,
    lastJobStartedAt: null,
    lastFetchAt: null,
    readyJobs: null,
    idleWithWorkSeconds: 0,
    silentSeconds: 0,
    stuck: false,
  };
}

function watchedQueueRecord(
  queue: QueueName,
  concurrency: number,
  seen: TrackedQueue,
  readyJobs: number | null,
  verdict: ReturnType<typeof watchQueue>,
): WorkerQueueRecord {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    queue,
    concurrency,
    active: seen.active,
    jobsStarted: seen.started,
    lastJobStartedAt: iso(seen.lastStartedAt),
    lastFetchAt: iso(seen.lastFetchAt),
    readyJobs,
    idleWithWorkSeconds: Math.round(verdict.idleWithWorkMs / 1000),
    silentSeconds: Math.round(verdict.silentMs / 1000),
    stuck: verdict.stuck,
  };
}

async function publishRecord(options: LivenessOptions, record: WorkerRecord): Promise<void> {
  const key = workersKey(options.prefix);
  try {
    await withTimeout(
      options.redis
        .multi()
        .hset(key, options.workerId, JSON.stringify(record))
        .pexpire(key, RECORD_KEY_TTL_MS)
        .exec(),
      READ_TIMEOUT_MS,
      'worker record',
    );
  } catch (error) {
    options.logger.debug({ err: error }, 'liveness: could not publish the worker record');
  }
}

async function removeRecord(options: LivenessOptions): Promise<void> {
  await withTimeout(
    options.redis.hdel(workersKey(options.prefix), options.workerId),
    READ_TIMEOUT_MS,
    'worker record',
  ).catch((error: unknown) =>
    options.logger.debug({ err: error }, 'liveness: could not remove the worker record'),
  );
}
