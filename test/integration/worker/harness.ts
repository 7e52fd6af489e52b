import type { Kysely } from 'kysely';
import type { RunningSimulator } from '../../../src/simulator/index.js';
import type { WindowStatus } from '../../../src/sync/windows.js';
import type { DB } from '../../../src/warehouse/schema.js';

export const HOUR = 3_600_000;

/** The environment of a `rewards-etl` process pointed at a test database, Redis prefix and simulator. */
export function cliEnv(options: {
  sim: RunningSimulator;
  databaseUrl: string;
  redisPrefix: string;
  env?: Record<string, string>;
}): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: options.redisPrefix,
    SVC_API_BASE_URL: options.sim.baseUrl,
    SVC_API_KEY: options.sim.credentials.apiKey,
    SVC_RATE_LIMIT_RPS: '1000',
    HTTP_PORT: '0',
    CHECKINS_WINDOW: '1h',
    CHECKINS_EVERY: '2s',
    LOG_LEVEL: 'info',
    ...options.env,
  };
}

/** Polls `read` until `done` holds for its value; rejects with the last value after `timeoutMs`. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > giveUpAt)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export type StatusCounts = Record<WindowStatus, number>;

export async function windowStatusCounts(db: Kysely<DB>): Promise<StatusCounts> {
  const rows = await db
    .selectFrom('rewards.sync_windows')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
    .where('stream', '=', 'checkins')
    .groupBy('status')
    .execute();
  const counts: StatusCounts = { pending: 0, running: 0, complete: 0, failed: 0 };
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

export async function checkInWindows(db: Kysely<DB>) {
  return db
    .selectFrom('rewards.sync_windows')
    .selectAll()
    .where('stream', '=', 'checkins')
    .orderBy('window_start')
    .execute();
}

/** The API's total_count for [from, to), asked with its own credential (its own simulator rate bucket). */
export async function apiTotal(sim: RunningSimulator, from: Date, to: Date): Promise<number> {
  const key = sim.control.credentials.mintApiKey(['read:checkins']);
  const url = `${sim.baseUrl}/check_ins?created_after=${from.toISOString()}&created_before=${to.toISOString()}&page=0&page_size=1`;
  const response = await fetch(url, { headers: { 'X-API-Key': key, 'User-Agent': 'worker-test' } });
  if (!response.ok) throw new Error(`total_count probe answered ${response.status}`);
  const body = (await response.json()) as { pagination: { total_count: number } };
  return body.pagination.total_count;
}
