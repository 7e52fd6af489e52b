import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../src/worker/queues.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createRedisClient } from '../../src/redis/connection.js';
import { redisSettingsFrom } from '../../src/redis/settings.js';
import type { TestDatabase } from '../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { testRedisPrefix } from '../helpers/redis.js';
import { createMigratedDatabase } from '../helpers/throwaway-database.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../helpers/throwaway-postgres.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/throwaway-redis.js';
import { CHAOS_ENCRYPTION_KEY, chaosEnv, secretsOf, sleep, waitFor } from './lib/chaos-env.js';
import { isAlive, runCli, startCli, stopCli, type CliProcess } from './lib/cli-process.js';
import { findSecretsInFiles } from './lib/log-scan.js';
import { recordChaosResult } from './lib/results.js';
import { chaosSizes } from './lib/scale.js';
import { allWindowsComplete, tallyCheckIns, windowStatuses } from './lib/warehouse-checks.js';

const sizes = chaosSizes();
const HOUR = 3_600_000;
const DAYS = 1;

// Issue 9, scenario 2: Redis and Postgres restart while workers page a backfill. The two servers
// are this file's own (a throw-away PostgreSQL cluster and a redis-server, each on a free port):
// the machine's services are never restarted (issue 37).
describe(`Redis and Postgres restarts mid-run (${sizes.scale})`, () => {
  let sim: RunningSimulator;
  let database: TestDatabase;
  let harness: PipelineHarness;
  let env: Record<string, string>;
  let prefix: string;
  let redis: Redis;
  let postgres: ThrowawayPostgres;
  let redisServer: ThrowawayRedis;
  let workers: CliProcess[] = [];
  const all: CliProcess[] = [];
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);
  const from = new Date(anchor.getTime() - DAYS * 24 * HOUR);
  let started = 0;
  const startWorker = () => {
    const proc = startCli(`restarts-worker-${started++}`, ['worker', '--shutdown-deadline', '5'], env);
    all.push(proc);
    return proc;
  };
  const completeWindows = async () => (await windowStatuses(database.db)).complete ?? 0;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 9002, checkIns: sizes.restartCheckIns, anchor, days: DAYS });
    [postgres, redisServer] = await Promise.all([startThrowawayPostgres(), startThrowawayRedis()]);
    database = await createMigratedDatabase(postgres, 'chaos_restarts');
    prefix = testRedisPrefix('chaos-restarts');
    env = chaosEnv({
      sim,
      databaseUrl: database.url,
      redisPrefix: prefix,
      startAt: from,
      // Small windows and a slow rate so the run is still going when the services restart.
      window: '30m',
      encryptionKey: CHAOS_ENCRYPTION_KEY,
      rps: Math.max(4, Math.floor(sizes.workerRps / 2)),
      extra: { REDIS_URL: redisServer.url },
    });
    const client = createRedisClient(
      redisSettingsFrom({ REDIS_URL: redisServer.url, REDIS_PREFIX: prefix }),
      {
        role: 'long-lived',
      },
    );
    if (!(client instanceof Redis)) throw new Error('a standalone redis-server gives a standalone client');
    redis = client;
    redis.on('error', () => undefined);
    harness = createPipelineHarness({ sim, db: database.db, redis, label: 'chaos-restarts-probe' });
    workers = [startWorker(), startWorker()];
    const backfill = await runCli(
      'restarts-backfill',
      ['backfill', '--from', from.toISOString(), '--to', anchor.toISOString()],
      env,
    );
    expect(backfill.code, backfill.stderr).toBe(0);
  });

  afterAll(async () => {
    await Promise.all(all.filter(isAlive).map((proc) => stopCli(proc, 5_000)));
    redis?.disconnect();
    await harness?.close();
    await sim?.close();
    await database?.drop();
    await redisServer?.stop();
    await postgres?.stop();
  });

  // Found by this suite: Job Schedulers live in Redis, which runs without persistence, so a Redis
  // restart removed them and a reconnected worker never ran the planner or a pass again. The worker
  // now restores missing schedulers when its connection is ready again (and every 30 s).
  it('a worker that survives a Redis restart re-registers its Job Schedulers', async () => {
    await waitFor(async () => (await completeWindows()) >= 3, 120_000, 500);
    await redisServer.restart({ downMs: 2_000 });
    const queue = new Queue(QUEUES.checkinsPlan, { connection: redis, prefix });
    try {
      const back = await waitFor(async () => (await queue.getJobSchedulersCount()) > 0, 20_000, 1_000);
      expect(workers.every(isAlive)).toBe(true);
      expect(back).toBe(true);
    } finally {
      await queue.close();
    }
  });

  // Found by this suite: a checked-out pool connection (then: the one holding an advisory lock)
  // got no error listener, so Postgres terminating that session (57P01, as on every restart)
  // crashed the process with "Unhandled 'error' event". Every client now gets a listener; and
  // locks are leases in a table now, which outlive the connections that wrote them.
  it('a process holding a lease survives Postgres terminating its sessions, and keeps the lease', async () => {
    const probe = new URL('./lib/hold-lock-and-terminate.ts', import.meta.url).pathname;
    const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', probe, database.url], {
      cwd: new URL('../../', import.meta.url).pathname,
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? 1,
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
      }),
    );
    expect(result.stderr).not.toContain("Unhandled 'error' event");
    expect(result.stdout).toContain('survived, lease held');
  });

  it('after Redis and Postgres restarts the run finishes with nothing lost and nothing doubled', async () => {
    // The operator's remedy for the bug above: restart the workers, which registers the schedulers
    // again; the planner re-enqueues every due window from Postgres (the queues were lost with Redis).
    const before = await completeWindows();
    await Promise.all(workers.map((proc) => stopCli(proc)));
    workers = [startWorker(), startWorker()];
    await waitFor(async () => (await completeWindows()) > before + 2, 120_000, 500);
    const completeAtPgRestart = await completeWindows();
    await postgres.restart();
    const pgRestartedAt = Date.now();
    await sleep(1_000);

    // A supervisor (Docker's restart policy, systemd) brings a crashed worker back; count the crashes.
    let crashes = 0;
    const complete = await waitFor(
      async () => {
        workers = workers.map((proc) => {
          if (isAlive(proc)) return proc;
          crashes++;
          return startWorker();
        });
        return allWindowsComplete(database.db, from, anchor);
      },
      sizes.settleMs,
      2_000,
    );
    const statuses = await windowStatuses(database.db);
    const verify = await runCli(
      'restarts-verify',
      ['verify', '--from', from.toISOString(), '--to', anchor.toISOString()],
      env,
    );
    const tally = await tallyCheckIns(database.db, from, anchor);
    const apiTotal = await harness.deps.api.countCheckIns({ createdAfter: from, createdBefore: anchor });
    const alive = workers.every(isAlive);
    await Promise.all(workers.map((proc) => stopCli(proc)));
    const secretHits = findSecretsInFiles(
      all.map((proc) => proc.logPath),
      secretsOf(env),
    );
    recordChaosResult('restarts', {
      redisRestarts: 1,
      postgresRestarts: 1,
      windowsCompleteAtPostgresRestart: completeAtPgRestart,
      secondsToFinishAfterPostgresRestart: Math.round((Date.now() - pgRestartedAt) / 1000),
      windows: statuses,
      apiTotal,
      warehouseRows: tally.rows,
      rowsLost: apiTotal - tally.distinct,
      duplicates: tally.rows - tally.distinct,
      verifyExit: verify.code,
      workersAliveAtEnd: alive,
      workerCrashesAtPostgresRestart: crashes,
      secretHits: secretHits.length,
    });

    expect(complete, JSON.stringify(statuses)).toBe(true);
    expect(alive).toBe(true);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(tally.rows).toBe(tally.distinct);
    expect(tally.distinct).toBe(apiTotal);
    expect(apiTotal).toBe(sizes.restartCheckIns);
    expect(secretHits).toEqual([]);
  });
});
