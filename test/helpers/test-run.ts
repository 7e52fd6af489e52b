import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// A test run's identity: 8 hex digits in REWARDS_TEST_RUN_ID (test/run-tests.ts sets it; a bare
// `vitest run` gets one from global-setup.ts). Every database and Redis key prefix a test makes on
// the machine's services carries it, and `/tmp/rewards-etl-run-<id>/owner.pid` names the process
// that owns the run: once that process is gone, whatever carries the id is a leftover that the next
// run removes (test/helpers/leftovers.ts).

export const RUN_DIR_PREFIX = 'rewards-etl-run-';
const RUN_ID = /^[0-9a-f]{8}$/;

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

/** The run's directory (always under /tmp, whatever TMPDIR the tests see), or undefined without an id. */
export function runDirOf(runId: string | undefined): string | undefined {
  if (runId === undefined || !RUN_ID.test(runId)) return undefined;
  return join('/tmp', `${RUN_DIR_PREFIX}${runId}`);
}

/** The current run's id, when there is one. */
export function currentRunId(): string | undefined {
  const id = process.env.REWARDS_TEST_RUN_ID;
  return id !== undefined && RUN_ID.test(id) ? id : undefined;
}

/** `_r<id>`: the suffix of every database a run makes (empty without a run id). */
export function runSuffix(): string {
  const id = currentRunId();
  return id === undefined ? '' : `_r${id}`;
}

/** Whether the run's owner process is still alive (false when its directory is gone). */
export function runIsAlive(runId: string): boolean {
  const dir = runDirOf(runId);
  if (dir === undefined) return false;
  try {
    const pid = Number(readFileSync(join(dir, 'owner.pid'), 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The run id a database name or Redis key carries (`…_r<id>` or `rtest-r<id>-…`), if any. */
export function runIdOfDatabase(name: string): string | undefined {
  return /^rewards_etl_.*_r([0-9a-f]{8})$/.exec(name)?.[1];
}

export function runIdOfRedisKey(key: string): string | undefined {
  return /^(?:rtest|rewards-etl-canary)-r([0-9a-f]{8})\b/.exec(key)?.[1];
}
