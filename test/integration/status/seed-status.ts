import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { loadConfig, type Config } from '../../../src/config/config.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { saveCheckinsState } from '../../../src/warehouse/checkins-feed-state.js';
import { workersKey, type WorkerRecord } from '../../../src/worker/worker-records.js';

// A warehouse in a known, slightly troubled state, for status, /metrics and the status page.

export const NOW = new Date('2026-11-22T12:30:00.000Z');
export const WEBHOOK_SECRET = 'whsec-very-secret-value-42';
export const REFRESH_TOKEN_SEALED = 'sealed-refresh-token-ciphertext';

const ago = (ms: number) => new Date(NOW.getTime() - ms);
const MIN = 60_000;
const HOUR = 3_600_000;

export function statusTestConfig(redisPrefix: string): Config {
  return loadConfig({
    REDIS_PREFIX: redisPrefix,
    SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
    SVC_OAUTH_CLIENT_ID: 'client-1',
    SVC_OAUTH_CLIENT_SECRET: 'client-secret-value-1',
    TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
    ALERT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PAYMENT_INTENTS_EVERY: '5s',
  });
}

export async function seedStatusData(db: Kysely<DB>): Promise<void> {
  await saveCheckinsState(db, { watermark: ago(5 * MIN), frontier: ago(2 * MIN) }, NOW);

  const window = (
    startHoursAgo: number,
    status: 'pending' | 'running' | 'complete' | 'failed',
    extra = {},
  ) => ({
    stream: 'checkins',
    window_start: ago(startHoursAgo * HOUR),
    window_end: ago((startHoursAgo - 1) * HOUR),
    status,
    ...extra,
  });
  await db
    .insertInto('rewards.sync_windows')
    .values([
      window(10, 'complete'),
      window(9, 'complete'),
      window(8, 'complete'),
      window(7, 'pending'),
      window(6, 'running'),
      window(5, 'failed', {
        attempts: 3,
        last_error: 'HTTP 500 <script>alert(1)</script>',
        next_attempt_at: ago(-10 * MIN),
      }),
      window(4, 'failed', { attempts: 1, last_error: 'socket hang up', next_attempt_at: ago(-1 * MIN) }),
    ])
    .execute();

  const run = (
    stream: string,
    startedAgoMs: number,
    status: 'succeeded' | 'failed' | 'partial',
    rows: number,
    error: string | null = null,
  ) => ({
    stream,
    started_at: ago(startedAgoMs),
    finished_at: ago(startedAgoMs - 20_000),
    status,
    rows,
    requests: Math.ceil(rows / 100) + 1,
    error,
  });
  await db
    .insertInto('rewards.sync_runs')
    .values([
      run('restaurants', 3 * HOUR, 'succeeded', 80),
      run('restaurants', 10 * MIN, 'succeeded', 120),
      run('checkins', MIN, 'succeeded', 8),
      run('balance', 20 * MIN, 'succeeded', 4),
      run('balance', 3 * MIN, 'failed', 0, 'balance endpoint answered 503'),
      run('payment_intents', 2 * HOUR, 'succeeded', 3),
    ])
    .execute();

  const checkIn = (firstSeenAgoMs: number) => ({
    id: randomUUID(),
    location_id: randomUUID(),
    restaurant_id: randomUUID(),
    svc_pay_enabled: false,
    created_at: ago(firstSeenAgoMs + HOUR),
    first_seen_at: ago(firstSeenAgoMs),
    last_seen_at: ago(firstSeenAgoMs),
  });
  await db
    .insertInto('rewards.check_ins')
    .values([
      ...Array.from({ length: 5 }, () => checkIn(20 * MIN)),
      ...Array.from({ length: 3 }, () => checkIn(2 * HOUR)),
    ])
    .execute();

  const intent = (id: string, status: string, createdAgoMs: number) => ({
    id,
    status,
    created_at: ago(createdAgoMs),
    first_seen_at: ago(createdAgoMs),
  });
  await db
    .insertInto('rewards.payment_intents')
    .values([
      intent('00000000-0000-4000-8000-000000000001', 'pending', 3 * HOUR),
      intent('00000000-0000-4000-8000-000000000002', 'pending', 10 * MIN),
      intent('00000000-0000-4000-8000-000000000003', 'paid', HOUR),
    ])
    .execute();

  const alert = (n: number, extra: Record<string, unknown>) => ({
    id: `${n}0000000-0000-4000-8000-000000000000`,
    type: 'payment_intent.paid',
    payment_intent_id: `${n}${n}${n}00000-0000-4000-8000-000000000000`,
    payload: '{}',
    created_at: ago(HOUR),
    ...extra,
  });
  await db
    .insertInto('rewards.alerts')
    .values([
      alert(1, { delivered_at: ago(50 * MIN), attempts: 1 }),
      alert(2, {}),
      alert(3, { attempts: 2, last_error: 'webhook answered 502', next_attempt_at: ago(-MIN) }),
      // A remote error echoing a secret: status must never show it.
      alert(4, {
        attempts: 8,
        last_error: `webhook answered 401 for secret ${WEBHOOK_SECRET}`,
        failed_at: ago(5 * MIN),
      }),
    ])
    .execute();

  const rejected = (stream: string, recordId: string, reason: string, seenAgoMs: number) => ({
    stream,
    record_id: recordId,
    reason,
    payload: '{}',
    payload_hash: randomUUID(),
    seen_at: ago(seenAgoMs),
    last_seen_at: ago(seenAgoMs),
  });
  await db
    .insertInto('rewards.rejected_records')
    .values([
      rejected('checkins', 'ci-1', 'created_at: not an epoch', 30 * MIN),
      rejected('checkins', 'ci-2', 'location_id missing', 3 * 86_400_000),
      rejected('restaurants', 'r-9', 'name: expected string', 2 * HOUR),
    ])
    .execute();

  await db
    .insertInto('rewards.oauth_tokens')
    .values({
      id: 'default',
      refresh_token_encrypted: REFRESH_TOKEN_SEALED,
      access_token_encrypted: 'sealed-access-token-ciphertext',
      access_token_expires_at: ago(-30 * MIN),
      last_refreshed_at: ago(30 * MIN),
      last_error: null,
    })
    .execute();
}

/** Two waiting jobs and one delayed one on the `streams` queue. */
export async function seedQueues(redis: Redis, prefix: string): Promise<void> {
  const queue = new Queue('streams', { connection: redis, prefix });
  try {
    await queue.add('restaurants', { stream: 'restaurants' });
    await queue.add('balance', { stream: 'balance' });
    await queue.add('alerts', { stream: 'alerts' }, { delay: 3_600_000 });
  } finally {
    await queue.close();
  }
}

/**
 * Failures with long texts, as real ones are (a URL, an error chain): a failed locations pass, a
 * failed window and a retrying alert. For the browser test's narrow screens.
 */
export async function seedLongFailures(db: Kysely<DB>): Promise<void> {
  await db
    .insertInto('rewards.sync_runs')
    .values({
      stream: 'locations',
      started_at: ago(4 * MIN),
      finished_at: ago(3 * MIN),
      status: 'failed',
      rows: 0,
      requests: 7,
      error:
        'GET https://partner.example.com/v1/restaurants/5f2c9a1e-7d44-4c1b-9a0e-3b8f6d2e1c47/locations?page=12&page_size=100 failed after 5 attempts: ECONNRESET (socket hang up while reading the response body)',
    })
    .execute();
  await db
    .insertInto('rewards.sync_windows')
    .values({
      stream: 'checkins',
      window_start: ago(12 * HOUR),
      window_end: ago(11 * HOUR),
      status: 'failed',
      attempts: 5,
      last_error:
        'page 37 of 52 shifted twice while paging (total_count 5,112 then 5,140 then 5,171): giving up this attempt; the window keeps its checkpoint at created_at=2026-11-22T01:14:09.000Z',
      next_attempt_at: ago(-20 * MIN),
    })
    .execute();
  await db
    .insertInto('rewards.alerts')
    .values({
      id: '50000000-0000-4000-8000-000000000000',
      type: 'payment_intent.paid',
      payment_intent_id: '55500000-0000-4000-8000-000000000000',
      payload: '{}',
      created_at: ago(HOUR),
      attempts: 6,
      last_error:
        'HTTP 503: <html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx/1.25.3</center></body></html>',
      next_attempt_at: ago(-4 * MIN),
    })
    .execute();
}

/** Record reads of two kinds (one past its ceiling), so the Freshness table has rows to show. */
export async function seedRecordReads(db: Kysely<DB>): Promise<void> {
  const read = (kind: string, i: number, readAgoMs: number) => ({
    kind,
    record_id: `r-${kind}-${i}`,
    last_read_at: ago(readAgoMs),
    last_changed_at: ago(readAgoMs * 3),
    interval_seconds: 3_600,
    next_due_at: ago(readAgoMs - HOUR),
    reads: 4,
    unchanged_reads: 2,
  });
  await db
    .insertInto('rewards.record_reads')
    .values([
      ...Array.from({ length: 6 }, (_, i) => read('location.open_hours', i, (i + 1) * 20 * MIN)),
      ...Array.from({ length: 4 }, (_, i) => read('restaurant.challenges', i, (i + 1) * 2 * HOUR)),
    ])
    .execute();
}

/** One worker process reporting itself stuck (its streams queue idle with jobs ready), seen just now. */
export async function seedStuckWorker(redis: Redis, prefix: string): Promise<void> {
  const record: WorkerRecord = {
    id: 'db-7:4242:1',
    host: 'db-7',
    pid: 4242,
    startedAt: ago(2 * HOUR).toISOString(),
    seenAt: NOW.toISOString(),
    idleTimeoutSeconds: 60,
    stuck: true,
    queues: [
      {
        queue: 'streams',
        concurrency: 3,
        active: 0,
        jobsStarted: 1_204,
        lastJobStartedAt: ago(3 * MIN).toISOString(),
        lastFetchAt: ago(70_000).toISOString(),
        readyJobs: 3,
        idleWithWorkSeconds: 72,
        silentSeconds: 70,
        stuck: true,
      },
    ],
  };
  await redis.hset(workersKey(prefix), record.id, JSON.stringify(record));
}
