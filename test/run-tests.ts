// `npm test`: the main vitest run, then the chaos suite (two lanes side by side, then the secrets
// scan), each as a child process; around them a
// canary proving the machine's PostgreSQL and Redis were only ever connected to (never restarted,
// flushed or dropped), a clean-up of what earlier killed runs left, and one summary of the tests
// skipped for missing optional tools. The last line is `tests: N passed, N failed, N skipped`.
// Run: `node --import tsx test/run-tests.ts [filters…]` (REWARDS_TEST_HIDE_TOOLS, CI, CHAOS_SCALE
// pass through). Filters go to every run, e.g. `npm test -- test/unit test/chaos/bad-config`.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { CHAOS_LOG_DIR } from './chaos/lib/cli-process.js';
import { removeLeftovers, type Removed } from './helpers/leftovers.js';
import { skippedToolsSummary } from './helpers/optional-tools.js';
import { ADMIN_URL, databaseUrl } from './helpers/postgres.js';
import { TEST_REDIS_URL } from './helpers/redis.js';
import { newRunId, runDirOf } from './helpers/test-run.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const CANARY_REDIS_DB = 15;

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

interface VitestRun extends Counts {
  name: string;
  exitCode: number;
  reported: boolean;
}

const runId = newRunId();
const runDir = runDirOf(runId)!;
const tmp = join(runDir, 'tmp');
mkdirSync(tmp, { recursive: true });
// Throw-away clusters run as `postgres` and PgBouncer as `nobody`: they must reach their dirs.
chmodSync(runDir, 0o755);
chmodSync(tmp, 0o1777);
writeFileSync(join(runDir, 'owner.pid'), `${process.pid}\n`);

// A closed pipe (`npm test | head`) must not end the run before its clean-up.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);

const running = new Set<ChildProcess>();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    // vitest ends its workers (and their exit hooks and watchers end their servers); the clean-up
    // below runs once it has exited.
    for (const child of running) child.kill(signal);
  });
}

const failures: string[] = [];
const runs: VitestRun[] = [];
let skipped: string[];
try {
  const earlier = await removeLeftovers({ adminUrl: ADMIN_URL, redisUrl: TEST_REDIS_URL, keepRunId: runId });
  describeRemoved('removed what earlier runs left', earlier);
  const canary = await plantCanary();
  const filters = process.argv.slice(2);
  // A filter may match files of one run only: the others then have nothing to run, which is fine.
  const filterArgs = filters.length === 0 ? [] : [...filters, '--passWithNoTests'];
  runs.push(await runVitest('main', filterArgs));
  if (!interrupted) runs.push(...(await runChaosLanes(filterArgs)));
  failures.push(...(await checkCanary(canary)));
} catch (error) {
  failures.push(`the harness itself failed: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  try {
    const own = await removeLeftovers({ adminUrl: ADMIN_URL, redisUrl: TEST_REDIS_URL, onlyRunId: runId });
    describeRemoved('this run left (now removed)', own);
  } catch (error) {
    failures.push(
      `removing what this run left failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  skipped = skippedToolsSummary(runDir);
  rmSync(runDir, { recursive: true, force: true });
}

for (const run of runs) {
  if (run.exitCode !== 0) failures.push(`the ${run.name} run exited ${run.exitCode}`);
  if (!run.reported) failures.push(`the ${run.name} run wrote no JSON report`);
}
if (interrupted) failures.push('interrupted');
console.log('');
for (const line of skipped) console.log(line);
for (const failure of failures) console.log(`FAILED: ${failure}`);
const total = runs.reduce<Counts>(
  (sum, run) => ({
    passed: sum.passed + run.passed,
    failed: sum.failed + run.failed,
    skipped: sum.skipped + run.skipped,
  }),
  { passed: 0, failed: 0, skipped: 0 },
);
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(failures.length === 0 ? 0 : 1);

/**
 * The chaos suite in lanes (vitest.chaos.config.ts): `a` (the Sentinel failover file, mostly waiting)
 * beside `b` (the rest), their output lines prefixed, then `last` (secrets.test.ts reads what both
 * logged). About 5 minutes instead of 10 on two cores.
 */
async function runChaosLanes(filterArgs: string[]): Promise<VitestRun[]> {
  rmSync(CHAOS_LOG_DIR, { recursive: true, force: true });
  const lane = (name: string, prefix?: string) =>
    runVitest(`chaos-${name}`, ['--config', 'vitest.chaos.config.ts', ...filterArgs], {
      env: { REWARDS_CHAOS_LANE: name },
      ...(prefix === undefined ? {} : { prefix }),
    });
  const sideBySide = await Promise.all([lane('a', 'chaos a'), lane('b', 'chaos b')]);
  if (interrupted) return sideBySide;
  return [...sideBySide, await lane('last')];
}

async function runVitest(
  name: string,
  args: string[],
  options: { env?: Record<string, string>; prefix?: string } = {},
): Promise<VitestRun> {
  const report = join(runDir, `${name}.json`);
  const started = Date.now();
  console.log(`\n== ${name} run`);
  const child = spawn(
    process.execPath,
    [VITEST, 'run', ...args, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
    {
      cwd: ROOT,
      stdio: options.prefix === undefined ? 'inherit' : ['inherit', 'pipe', 'pipe'],
      // Every temporary file and throw-away server of the run lives under the run's directory, so
      // nothing outlives it.
      env: { ...process.env, ...options.env, REWARDS_TEST_RUN_ID: runId, TMPDIR: tmp },
    },
  );
  running.add(child);
  // Runs side by side: each line says whose it is.
  const prefix = options.prefix;
  if (prefix !== undefined) {
    const forward = (from: NodeJS.ReadableStream | null, to: NodeJS.WriteStream) => {
      if (from === null) return;
      createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) =>
        to.write(`[${prefix}] ${line}\n`),
      );
    };
    forward(child.stdout, process.stdout);
    forward(child.stderr, process.stderr);
  }
  const closed = new Promise((resolve) => child.once('close', resolve));
  const exitCode = await new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128))),
  );
  // The last prefixed lines, unless a process that outlives vitest holds its pipe.
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  running.delete(child);
  console.log(`== ${name} run: exit ${exitCode} in ${Math.round((Date.now() - started) / 1000)} s`);
  let json: { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
  try {
    json = JSON.parse(readFileSync(report, 'utf8')) as typeof json;
  } catch {
    // Missing or cut short: the run was killed.
    return { name, exitCode, reported: false, passed: 0, failed: 0, skipped: 0 };
  }
  return {
    name,
    exitCode,
    reported: true,
    passed: json.numPassedTests,
    failed: json.numFailedTests,
    skipped: json.numPendingTests + json.numTodoTests,
  };
}

interface Canary {
  postmasterStart: string;
  redisRunId: string;
  database: string;
  key: string;
  value: string;
}

/**
 * Records the identity of the machine's services and plants a table in a database of its own and a
 * key in another Redis DB: a restart changes the first two, a flush or a dropped database the rest.
 */
async function plantCanary(): Promise<Canary> {
  const value = `planted by test run ${runId} at ${new Date().toISOString()}`;
  const database = `rewards_etl_canary_r${runId}`;
  const key = `rewards-etl-canary-r${runId}`;
  const postmasterStart = await pgQuery(ADMIN_URL, 'select pg_postmaster_start_time()::text as v');
  await pgQuery(ADMIN_URL, `create database "${database}"`);
  await pgQuery(databaseUrl(database), 'create table canary (note text not null)');
  await pgQuery(databaseUrl(database), `insert into canary values ('${value}')`);
  const redis = new Redis(TEST_REDIS_URL, { db: CANARY_REDIS_DB });
  try {
    const redisRunId = serverRunId(await redis.info('server'));
    // Expires by itself if this run is killed and no later run removes it.
    await redis.set(key, value, 'EX', 86_400);
    return { postmasterStart, redisRunId, database, key, value };
  } finally {
    redis.disconnect();
  }
}

/** What changed since `plantCanary` (empty: nothing); removes the canary either way. */
async function checkCanary(canary: Canary): Promise<string[]> {
  const problems: string[] = [];
  const postmasterStart = await pgQuery(ADMIN_URL, 'select pg_postmaster_start_time()::text as v');
  if (postmasterStart !== canary.postmasterStart)
    problems.push(
      `the local PostgreSQL restarted (started ${canary.postmasterStart}, now ${postmasterStart})`,
    );
  const note = await pgQuery(databaseUrl(canary.database), 'select note as v from canary').catch(
    (error: unknown) => `(${String(error)})`,
  );
  if (note !== canary.value)
    problems.push(`the canary table in ${canary.database} is gone or changed: ${note}`);
  await pgQuery(ADMIN_URL, `drop database if exists "${canary.database}" with (force)`);
  const redis = new Redis(TEST_REDIS_URL, { db: CANARY_REDIS_DB });
  try {
    const redisRunId = serverRunId(await redis.info('server'));
    if (redisRunId !== canary.redisRunId)
      problems.push(`the local Redis restarted (run_id ${canary.redisRunId}, now ${redisRunId})`);
    const value = await redis.get(canary.key);
    if (value !== canary.value)
      problems.push(`the canary key in Redis DB ${CANARY_REDIS_DB} is gone or changed`);
    await redis.del(canary.key);
  } finally {
    redis.disconnect();
  }
  if (problems.length === 0)
    console.log('canary: the local PostgreSQL and Redis were not restarted, flushed or dropped');
  return problems;
}

async function pgQuery(url: string, text: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ v?: string }>(text);
    return rows[0]?.v ?? '';
  } finally {
    await client.end();
  }
}

function serverRunId(info: string): string {
  const found = /^run_id:(\w+)/m.exec(info)?.[1];
  if (found === undefined) throw new Error('Redis INFO server has no run_id');
  return found;
}

function describeRemoved(what: string, removed: Removed): void {
  const parts = [
    removed.databases.length > 0 ? `${removed.databases.length} databases` : '',
    removed.redisKeys > 0 ? `${removed.redisKeys} Redis keys` : '',
    removed.dirs.length > 0 ? `${removed.dirs.length} directories` : '',
    removed.processes.length > 0 ? `${removed.processes.length} processes` : '',
  ].filter((part) => part !== '');
  if (parts.length > 0) console.log(`${what}: ${parts.join(', ')}`);
}
