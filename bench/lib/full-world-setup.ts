// Setup for bench/full-world.ts: connect the members and bring the warehouse to a steady state
// before the measured run, without spending the measured run's rate limit or ledger; and the
// payments the bench makes during the run.
import { setTimeout as sleep } from 'node:timers/promises';
import pMap from 'p-map';
import { sql, type Kysely } from 'kysely';
import { createMemberApis } from '../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../src/api/oauth/member-connection.js';
import type { Config } from '../../src/config/config.js';
import type { Logger } from '../../src/log.js';
import { createRedisClient } from '../../src/redis/connection.js';
import { deleteKeysWithPrefix } from '../../src/redis/delete-keys.js';
import { createPipelineRuntime } from '../../src/runtime/pipeline.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { runStreamPass } from '../../src/streams/passes.js';
import type { StreamName } from '../../src/sync/stream-facts.js';
import type { DB } from '../../src/warehouse/schema.js';
import { createTokenStore } from '../../src/warehouse/oauth-tokens.js';

/**
 * Stores `count` members' connections as `members import` would: each member's refresh token
 * exchanged at the simulator's token endpoint. `config` is the warm-up's (a limit that never binds,
 * its own Redis prefix), so neither the measured run's limiter slots nor its ledger see these.
 */
export async function connectMembers(
  sim: RunningSimulator,
  db: Kysely<DB>,
  config: Config,
  logger: Logger,
  count: number,
): Promise<number> {
  const redis = createRedisClient(config.redis, { role: 'long-lived' });
  const apis = createMemberApis({ config, redis, tokenStore: createTokenStore(db), logger });
  const store = createTokenStore(db);
  const key = config.oauth!.encryptionKey.reveal();
  try {
    const grants = sim.control.members.issueRefreshTokens({ count });
    await pMap(
      grants,
      async (grant) => {
        await storeMemberConnection(store, {
          issued: await apis.tokenEndpoint.refresh(grant.refreshToken),
          presentedRefreshToken: grant.refreshToken,
          encryptionKey: key,
          now: new Date(),
        });
      },
      { concurrency: 8 },
    );
    return grants.length;
  } finally {
    await apis.close();
    redis.disconnect();
  }
}

export interface WarmUpReport {
  seconds: Partial<Record<StreamName, number>>;
  requests: Partial<Record<StreamName, number>>;
  intentsWithFullForm: number;
}

/**
 * One pass of every stream but locations with the limit lifted (`config`: the warm-up's), so the
 * measured run starts from a warehouse that has read everything once: the feed since
 * CHECKINS_START_AT, every restaurant, challenge list and connected member, the open intents' full
 * forms. Challenges, members and intents run side by side (each pass is sequential inside).
 * Locations are not read here (two reads each for the ~18,000 locations a day of the feed brings
 * took 336 s on this machine): markLocationsRead stands for their first pass.
 */
export async function warmUp(config: Config, logger: Logger, db: Kysely<DB>): Promise<WarmUpReport> {
  const runtime = createPipelineRuntime({ config, logger, db, applicationName: 'bench warm-up' });
  await runtime.clockReady();
  const report: WarmUpReport = { seconds: {}, requests: {}, intentsWithFullForm: 0 };
  const pass = async (stream: StreamName) => {
    const started = performance.now();
    const result = await runStreamPass(runtime.deps, stream);
    report.seconds[stream] = Math.round((performance.now() - started) / 1000);
    report.requests[stream] = 'requests' in result ? (result.requests ?? 0) : 0;
    if (result.status === 'failed') throw new Error(`warm-up ${stream} failed: ${result.error ?? ''}`);
  };
  try {
    for (const stream of ['balance', 'restaurants', 'checkins'] as const) await pass(stream);
    // Intents: rounds until every pending intent's full form is read (a round reads within its
    // allowance; the lifted limit makes that nearly all of them).
    const intents = async () => {
      for (let round = 0; round < 20; round++) {
        await pass('payment_intents');
        const row = await db
          .selectFrom('rewards.payment_intents')
          .select([
            (eb) => eb.fn.countAll<string>().as('n'),
            (eb) => eb.fn.count<string>('payer_account_balance_id').as('full'),
          ])
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow();
        report.intentsWithFullForm = Number(row.full);
        if (Number(row.full) >= Number(row.n)) return;
      }
    };
    await Promise.all([pass('challenges'), pass('members'), intents()]);
  } finally {
    await deleteKeysWithPrefix(runtime.redis, config.redisPrefix).catch(() => undefined);
    await runtime.close();
  }
  return report;
}

/**
 * The warm-up read every record within a few minutes, so each would fall due at the same moment
 * one interval later. A steady state has them spread over their interval: each record's last read
 * is moved back by a uniformly random part of its interval (its next due time with it; a last
 * change is never left after its read). Only times move; the learned intervals and counters stay.
 */
export async function spreadReads(db: Kysely<DB>): Promise<number> {
  const result = await sql`
    update rewards.record_reads r
       set last_read_at = moved.at,
           next_due_at = moved.at + make_interval(secs => r.interval_seconds),
           last_changed_at = case when r.last_changed_at is null then null
                                  else least(r.last_changed_at, moved.at) end
      from (select kind, record_id,
                   now() - make_interval(secs => random() * interval_seconds) as at
              from rewards.record_reads) moved
     where moved.kind = r.kind and moved.record_id = r.record_id`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Stands for the locations' first pass: every location the feed brought is marked refreshed at a
 * uniformly random moment within its kinds' 7-day ceiling (the pipeline's own rule: a location
 * refreshed before it had a read state counts as read, both kinds, at its last_refreshed_at).
 * Their open hours were never stored, so the first read of a location's open hours in the run
 * finds them new (a change), which a steady state would not.
 */
export async function markLocationsRead(db: Kysely<DB>): Promise<number> {
  const result = await sql`
    update rewards.locations
       set last_refreshed_at = now() - make_interval(secs => random() * 7 * 86400)
     where last_refreshed_at is null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Connected just before the run, every member's access token (60 min lifetime) would outlive a
 * short run, where at the steady state a member read about hourly needs a refresh for nearly every
 * read. Each member's stored expiry, which the token manager decides by (refreshing 2 min before
 * it), is moved to a uniformly random moment of the next 60 minutes, so their refreshes fall in the
 * run at the rate tokens expire (members / 60 per minute), each at the member's first read after.
 */
export async function spreadMemberTokenExpiry(db: Kysely<DB>): Promise<number> {
  const result = await sql`
    update rewards.oauth_tokens
       set access_token_expires_at = now() + make_interval(secs => random() * 3600)
     where id like 'member:%' and access_token_encrypted is not null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * The alternative to spreadMemberTokenExpiry (`--token-expiry reads`), tied to the reads as at the
 * steady state: a member read every I minutes (its most frequent kind, `member.visits`, I within
 * [30, 60] min after the warm-up's first read) refreshes at every k-th read, k = ceil(58 / I) (the
 * manager refreshes 2 min early), so its token was refreshed j reads before its latest, j uniform
 * in 0..k−1, and expires 60 min after that read. Its next read then needs a refresh with
 * probability 1/k, which the uniform spread makes only (t + 2) / 60 at minute t of the run.
 */
export async function memberTokenExpiryAfterReads(db: Kysely<DB>): Promise<number> {
  const result = await sql`
    update rewards.oauth_tokens t
       set access_token_expires_at = m.last_read_at + interval '60 minutes'
             - make_interval(secs => floor(random() * ceil(3480.0 / m.interval_seconds)) * m.interval_seconds)
      from (select distinct on (record_id) 'member:' || lower(record_id) as id, last_read_at,
                   interval_seconds
              from rewards.record_reads
             where kind like 'member.%' and interval_seconds > 0
             order by record_id, interval_seconds, last_read_at desc) m
     where t.id = m.id and t.access_token_encrypted is not null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export interface Payments {
  paidAt: Map<string, number>;
  failed: number;
}

/** Pays `count` intents at uniformly random moments of [0, windowMs): open ones whose full form the warehouse holds. */
export async function payAtRandom(
  sim: RunningSimulator,
  db: Kysely<DB>,
  count: number,
  windowMs: number,
): Promise<Payments> {
  const payments: Payments = { paidAt: new Map(), failed: 0 };
  const moments = Array.from({ length: count }, () => Math.random() * windowMs).sort((a, b) => a - b);
  const started = Date.now();
  for (const moment of moments) {
    await sleep(Math.max(0, started + moment - Date.now()));
    const candidates = await db
      .selectFrom('rewards.payment_intents')
      .select('id')
      .where('status', '=', 'pending')
      .where('payer_account_balance_id', 'is not', null)
      .execute();
    let paid = false;
    for (const { id } of candidates.sort(() => Math.random() - 0.5).slice(0, 20)) {
      if (payments.paidAt.has(id) || sim.control.intents.get(id).status !== 'pending') continue;
      try {
        const intent = sim.control.intents.pay(id);
        payments.paidAt.set(id, Date.parse(intent.paid_at ?? new Date().toISOString()));
        paid = intent.status === 'paid';
        if (paid) break;
        payments.paidAt.delete(id);
      } catch {
        // A wallet that cannot pay: try another.
      }
    }
    if (!paid) payments.failed++;
  }
  return payments;
}
