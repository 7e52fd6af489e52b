import { readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { RUN_DIR_PREFIX, runIdOfDatabase, runIdOfRedisKey, runIsAlive } from './test-run.js';

// What a killed test run leaves behind, found and removed by the next run (test/run-tests.ts):
// databases and Redis keys carrying the id of a run whose owner process is gone, its run directory
// under /tmp (where its throw-away servers lived: their processes are ended first), and other
// /tmp/rewards-etl-* directories that no process uses any more. Only what the test harness itself
// made is touched: names with a run id, processes whose working directory is one of those dirs.

export interface Removed {
  databases: string[];
  redisKeys: number;
  dirs: string[];
  processes: number[];
}

/** Directories of other tests without a run id (pre-run-id runs, bare helpers) count as left only when this old. */
const ORPHAN_DIR_AGE_MS = 10 * 60_000;

/**
 * Removes what runs other than `keepRunId` left, or (with `onlyRunId`) what that one run left: its
 * databases, keys and processes, as at the end of a run.
 */
export async function removeLeftovers(options: {
  adminUrl: string;
  redisUrl: string;
  keepRunId?: string;
  onlyRunId?: string;
}): Promise<Removed> {
  const isLeft = (runId: string) =>
    options.onlyRunId !== undefined
      ? runId === options.onlyRunId
      : runId !== options.keepRunId && !runIsAlive(runId);
  const removed: Removed = { databases: [], redisKeys: 0, dirs: [], processes: [] };

  const admin = new pg.Client({ connectionString: options.adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname ~ '^rewards_etl_.*_r[0-9a-f]{8}$'`,
    );
    for (const { datname } of rows) {
      const runId = runIdOfDatabase(datname);
      if (runId === undefined || !isLeft(runId)) continue;
      await admin.query(`drop database if exists "${datname}" with (force)`);
      removed.databases.push(datname);
    }
  } finally {
    await admin.end();
  }

  for (const db of [0, 15]) {
    const redis = new Redis(options.redisUrl, { db, lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(
          cursor,
          'MATCH',
          db === 0 ? 'rtest-r*' : 'rewards-etl-canary-r*',
          'COUNT',
          1000,
        );
        cursor = next;
        const left = keys.filter((key) => {
          const runId = runIdOfRedisKey(key);
          return runId !== undefined && isLeft(runId);
        });
        if (left.length > 0) removed.redisKeys += await redis.unlink(...left);
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }

  for (const name of readdirSync('/tmp')) {
    if (!name.startsWith('rewards-etl-')) continue;
    const dir = join('/tmp', name);
    if (name.startsWith(RUN_DIR_PREFIX)) {
      if (!isLeft(name.slice(RUN_DIR_PREFIX.length))) continue;
      removed.processes.push(...endProcessesIn(dir));
      // The run's own directory goes with its owner (run-tests.ts removes it after this call).
      if (options.onlyRunId === undefined) {
        rmSync(dir, { recursive: true, force: true });
        removed.dirs.push(dir);
      }
    } else if (options.onlyRunId === undefined && abandoned(dir)) {
      removed.processes.push(...endProcessesIn(dir, { orphansOnly: true }));
      if (processesIn(dir).length === 0) {
        rmSync(dir, { recursive: true, force: true });
        removed.dirs.push(dir);
      }
    }
  }
  return removed;
}

/** Old enough, and no process works in it (orphans, whose parent is gone, do not count). */
function abandoned(dir: string): boolean {
  try {
    if (Date.now() - statSync(dir).mtimeMs < ORPHAN_DIR_AGE_MS) return false;
  } catch {
    return false;
  }
  return processesIn(dir).every((proc) => proc.ppid === 1);
}

interface ProcessInfo {
  pid: number;
  ppid: number;
}

/** Processes whose working directory is `dir` or below (Linux /proc; ours only: others are unreadable). */
function processesIn(dir: string): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(entry), ppid });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** SIGKILL to the test servers working in `dir` (redis-server, postgres, pgbouncer), then waits for them (5 s). */
function endProcessesIn(dir: string, options: { orphansOnly?: boolean } = {}): number[] {
  const victims = processesIn(dir).filter((proc) => !options.orphansOnly || proc.ppid === 1);
  for (const { pid } of victims) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && victims.some(({ pid }) => alive(pid))) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  return victims.map(({ pid }) => pid);
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
