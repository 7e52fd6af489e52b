import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig, type Config } from '../config/config.js';
import { secretValues } from '../config/secret-values.js';
import { createLogger } from '../log.js';
import { createMemberApis } from '../api/http-partner-api.js';
import { storeMemberConnection } from '../api/oauth/member-connection.js';
import { createOneShotClient } from '../redis/connection.js';
import { deleteKeysWithPrefix } from '../redis/delete-keys.js';
import { effectiveKeyPrefix, type RedisSettings } from '../redis/settings.js';
import { createPipelineRuntime, type PipelineRuntime } from '../runtime/pipeline.js';
import { startSimulator, type RunningSimulator } from '../simulator/index.js';
import { runStreamPass, type PassResult } from '../streams/passes.js';
import { STREAM_NAMES, type StreamName } from '../sync/stream-facts.js';
import { countWindowRows } from '../warehouse/check-ins.js';
import { splitDatabaseUrl } from '../warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../warehouse/migrate.js';
import { windowsInRange } from '../warehouse/sync-window-reads.js';
import { busiestRestaurants, medianVisitByCohort, payEnabledShare, visitsByTier } from './analytics.js';
import { startWebhookReceiver } from './webhook-receiver.js';
import { createTokenStore } from '../warehouse/oauth-tokens.js';

const DEMO_DATABASE = 'rewards_etl_demo';
const TABLES = [
  'restaurants',
  'restaurants_history',
  'neighborhoods',
  'locations',
  'location_open_hours',
  'check_ins',
  'challenges',
  'balance_snapshots',
  'payment_intents',
  'payment_intent_transitions',
  'alerts',
  'members',
  'member_statuses',
  'member_check_ins',
  'memberships',
  'rejected_records',
] as const;

export interface DemoOptions {
  /** Where Postgres and Redis are: the demo uses their servers, with its own database and key prefix. */
  databaseUrl: string;
  /** The configured Redis (standalone, Sentinel or Cluster); the demo writes under its own prefix. */
  redis: RedisSettings;
  out: NodeJS.WritableStream;
  checkIns?: number;
}

/**
 * The whole pipeline once, with no configuration: the simulator in-process, a fresh demo
 * database, every stream, intents paid while it runs (alerts to an in-process receiver),
 * three members connected, then a summary and four answers computed by SQL over the warehouse.
 */
export async function runDemo(options: DemoOptions): Promise<{ ok: boolean }> {
  const started = Date.now();
  const say: Say = (line = '') => options.out.write(`${line}\n`);
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;

  const sim = await startSimulator({ seed: 42, checkIns: options.checkIns ?? 30_000, days: 14 });
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const receiver = await startWebhookReceiver(webhookSecret);
  const demoUrl = withDatabase(options.databaseUrl, DEMO_DATABASE);
  const config = demoConfig(options, { sim, demoUrl, webhookUrl: receiver.url, webhookSecret });
  const logger = createLogger({ level: config.logLevel, secrets: secretValues(config), pretty: false });

  say(
    `rewards-etl demo: simulator at ${sim.baseUrl}, warehouse ${DEMO_DATABASE}, webhook receiver ${receiver.url}`,
  );
  await prepareWarehouse(demoUrl);
  say(`  migrated ${DEMO_DATABASE}                                   ${elapsed()}`);

  const runtime = createPipelineRuntime({ config, logger, applicationName: 'rewards-etl demo' });
  await runtime.clockReady();
  try {
    const passesOk = await runEveryStream(runtime, sim, say, elapsed);
    const { verified, windows } = await verifyWindows(runtime);
    say();
    await printWarehouse(runtime, say);
    const delivered = receiver.received.filter((alert) => alert.signatureOk).length;
    say(`  check-in windows verified    ${verified}/${windows} (warehouse count = API total_count)`);
    say(
      `  alerts delivered             ${delivered} (payment_intent.paid, signatures verified by the receiver)`,
    );
    await printAnswers(runtime, say);
    say();
    say(`Done in ${elapsed()}. Explore it: psql ${demoUrl.replace(/:[^:@/]+@/, ':…@')}`);
    return { ok: passesOk && verified === windows && delivered === 4 };
  } finally {
    await runtime.close();
    await deletePrefix(config.redis, config.redisPrefix);
    await receiver.close();
    await sim.close();
  }
}

type Say = (line?: string) => void;

/** The simulator's settings, the demo's own database and Redis prefix, on the user's Redis. */
function demoConfig(
  options: DemoOptions,
  parts: { sim: RunningSimulator; demoUrl: string; webhookUrl: string; webhookSecret: string },
): Config {
  const { sim } = parts;
  const prefix = `rewards-etl-demo-${randomBytes(3).toString('hex')}`;
  const loaded: Config = loadConfig({
    DATABASE_URL: parts.demoUrl,
    REDIS_PREFIX: prefix,
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
    SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
    SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_RATE_LIMIT_RPS: '500',
    SVC_PAGE_SIZE: '500',
    CHECKINS_START_AT: new Date(Date.now() - 8 * 86_400_000).toISOString(),
    CHECKINS_WINDOW: '6h',
    ALERT_WEBHOOK_URL: parts.webhookUrl,
    ALERT_WEBHOOK_SECRET: parts.webhookSecret,
    LOG_LEVEL: 'warn',
  });
  const keyPrefix = effectiveKeyPrefix(prefix, options.redis.topology.mode);
  return {
    ...loaded,
    redis: { ...options.redis, keyPrefix },
    redisPrefix: keyPrefix,
    redisUrl: options.redis.topology.mode === 'standalone' ? options.redis.topology.url : loaded.redisUrl,
  };
}

/** A fresh, migrated demo database (dropped and recreated on each run). */
async function prepareWarehouse(demoUrl: string): Promise<void> {
  await recreateDatabase(demoUrl);
  const { createDatabase } = await import('../warehouse/database.js');
  const db = createDatabase({ url: demoUrl, maxConnections: 2 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Every stream once, in the registry's order, with intents paid between the import pass and the
 * poll (so they alert) and three members connected before the members pass. False if a pass failed.
 */
async function runEveryStream(
  runtime: PipelineRuntime,
  sim: RunningSimulator,
  say: Say,
  elapsed: () => string,
): Promise<boolean> {
  let ok = true;
  const pass = async (stream: StreamName, note = '') => {
    const result = await runStreamPass(runtime.deps, stream);
    if (result.status === 'failed' || result.status === 'skipped' || result.status === 'lease-lost')
      ok = false;
    say(`  ${(stream + note).padEnd(26)} ${describe(result).padEnd(40)} ${elapsed()}`);
  };
  for (const stream of STREAM_NAMES) {
    if (stream === 'payment_intents') {
      // The first pass marks when watching began: intents paid before raise no alert.
      await pass(stream, ' (import)');
      payIntents(sim);
      say(`  members paid 4 new intents, canceled 1, left 1 pending (in the simulator)`);
      // The poll delivers each alert as it commits; the alerts pass only retries what failed.
      await pass(stream, ' (poll)');
    } else if (stream === 'members') {
      const connected = await connectMembers(runtime.deps, sim, 3);
      say(`  connected ${connected} members (their own OAuth grants, as \`members import\` does)`);
      await pass(stream);
    } else {
      await pass(stream, stream === 'alerts' ? ' (retries)' : '');
    }
  }
  return ok;
}

/** Six new intents: four paid, one canceled, one left pending. */
function payIntents(sim: RunningSimulator): void {
  const fresh = Array.from({ length: 6 }, (_, i) =>
    sim.control.intents.create({
      amount: (BigInt(i + 1) * 1_500_000_000_000_000_000n).toString(),
      description: `demo order #${i + 1}`,
      metadata: { order: `demo-${i + 1}` },
    }),
  );
  for (const intent of fresh.slice(0, 4)) sim.control.intents.pay(intent.id);
  sim.control.intents.cancel(fresh[4]!.id);
}

/** Each complete window's live rows (plus rejections) against the API's total_count, as `verify` does. */
async function verifyWindows(runtime: PipelineRuntime): Promise<{ verified: number; windows: number }> {
  const windows = await windowsInRange(runtime.db, {}, ['complete']);
  let verified = 0;
  for (const window of windows) {
    const api = await runtime.deps.api.countCheckIns({
      createdAfter: window.window_start,
      createdBefore: window.window_end,
    });
    const ours = await countWindowRows(runtime.db, window.window_start, window.window_end, null);
    if (api === ours.total + window.rows_rejected) verified++;
  }
  return { verified, windows: windows.length };
}

async function printWarehouse(runtime: PipelineRuntime, say: Say): Promise<void> {
  say('Warehouse (schema rewards):');
  for (const table of TABLES) {
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from ${sql.table(`rewards.${table}`)}`.execute(runtime.db);
    say(
      `  ${table.padEnd(28)} ${Number(rows[0]?.n ?? 0)
        .toLocaleString('en-US')
        .padStart(8)}`,
    );
  }
}

/** The four answers computed by SQL over the warehouse. */
async function printAnswers(runtime: PipelineRuntime, say: Say): Promise<void> {
  say();
  say('Busiest restaurants, last 7 days:');
  for (const [i, row] of (await busiestRestaurants(runtime.db, new Date())).entries()) {
    say(
      `  ${i + 1}. ${row.name.padEnd(32)} ${String(row.cohort ?? '').padEnd(4)} ${row.checkIns.toLocaleString('en-US').padStart(6)} check-ins`,
    );
  }
  const share = await payEnabledShare(runtime.db);
  say();
  say(
    `Share of check-ins with pay enabled: ${(share.share * 100).toFixed(1)}% (${share.pay.toLocaleString('en-US')} of ${share.total.toLocaleString('en-US')})`,
  );
  say();
  say('Median visit length by cohort:');
  for (const row of await medianVisitByCohort(runtime.db)) {
    say(
      `  ${row.cohort.padEnd(6)} ${row.medianMinutes === null ? '-' : `${row.medianMinutes.toFixed(0)} min`}  (${row.visits.toLocaleString('en-US')} finished visits)`,
    );
  }
  say();
  say("Members' visits by status tier:");
  for (const row of await visitsByTier(runtime.db)) {
    say(
      `  ${row.tier.padEnd(22)} ${plural(row.members, 'member').padEnd(10)} ${plural(row.visits, 'visit')}`,
    );
  }
}

/** What `members import` does, for the first `count` simulator members: their own tokens, stored encrypted. */
async function connectMembers(
  deps: PipelineRuntime['deps'],
  sim: RunningSimulator,
  count: number,
): Promise<number> {
  const apis = createMemberApis({
    config: deps.config,
    redis: deps.redis,
    tokenStore: createTokenStore(deps.db),
    logger: deps.logger,
  });
  try {
    for (const member of sim.control.members.list().slice(0, count)) {
      const refreshToken = sim.control.credentials.issueRefreshToken({ memberId: member.id });
      await storeMemberConnection(createTokenStore(deps.db), {
        issued: await apis.tokenEndpoint.refresh(refreshToken),
        presentedRefreshToken: refreshToken,
        encryptionKey: deps.config.oauth!.encryptionKey.reveal(),
        now: new Date(),
      });
    }
  } finally {
    await apis.close();
  }
  return count;
}

function describe(result: PassResult): string {
  if (!('runId' in result)) return `${result.status}: ${result.reason}`;
  return `${result.status}, ${plural(result.rows, 'row')}, ${plural(result.requests ?? 0, 'request')}`;
}

function plural(count: number, noun: string): string {
  return `${count.toLocaleString('en-US')} ${noun}${count === 1 ? '' : 's'}`;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function recreateDatabase(url: string): Promise<void> {
  const { name, maintenanceUrl } = splitDatabaseUrl(url);
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
  await ensureDatabase(url);
}

async function deletePrefix(settings: RedisSettings, prefix: string): Promise<void> {
  const { redis } = createOneShotClient(settings);
  try {
    await redis.connect();
    await deleteKeysWithPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
