import { sql, type Kysely } from 'kysely';
import type { RedisClient } from '../redis/connection.js';
import { pingRedis } from '../status/queue-depths.js';
import { withTimeout } from '../with-timeout.js';
import type { DB } from '../warehouse/schema.js';
import { migrationsCurrent } from '../warehouse/migrate.js';

const CHECK_TIMEOUT_MS = 3_000;

export type CheckResult = { ok: true } | { ok: false; error: string };

export interface Readiness {
  ready: boolean;
  checks: { postgres: CheckResult; redis: CheckResult; migrations: CheckResult; worker?: CheckResult };
}

/** In a worker: whether its queue workers take the jobs they could (liveness.ts). */
export type LivenessProbe = () => { ok: boolean; stuckQueues: readonly string[] };

/** What a failed check says about itself: the real error (addresses, driver texts) goes to the log. */
export type ReadinessFailureLog = (check: keyof Readiness['checks'], detail: unknown) => void;

// /readyz answers whoever can reach the port, without a token: fixed phrases only, never a
// connection error text (it names internal hosts and ports).
export const READINESS_PHRASES = {
  postgresUnreachable: 'postgres unreachable',
  redisUnreachable: 'redis unreachable',
  noRedis: 'no Redis connection',
  migrationsPending: 'pending migrations: run `rewards-etl migrate`',
  migrationsUnchecked: 'not checked: postgres unreachable',
  migrationsFailed: 'migration check failed',
  workerStuck: 'queue worker not taking jobs (stuck); the process restarts',
} as const;

function failedWith(error: string): CheckResult {
  return { ok: false, error };
}

/**
 * Ready = Postgres answers, Redis answers PING, and the schema is at the latest migration (a
 * worker on an old schema would write wrong rows). Each check is bounded in time, so a probe
 * never hangs on a dead dependency.
 */
export async function checkReadiness(
  db: Kysely<DB>,
  redis: RedisClient | undefined,
  logFailure: ReadinessFailureLog = () => undefined,
  liveness?: LivenessProbe,
): Promise<Readiness> {
  const postgres = await withTimeout(sql`select 1`.execute(db), CHECK_TIMEOUT_MS, 'postgres')
    .then((): CheckResult => ({ ok: true }))
    .catch((error: unknown) => {
      logFailure('postgres', error);
      return failedWith(READINESS_PHRASES.postgresUnreachable);
    });
  const [redisCheck, migrations] = await Promise.all([
    checkRedis(redis, logFailure),
    postgres.ok
      ? withTimeout(migrationsCurrent(db), CHECK_TIMEOUT_MS, 'migration check')
          .then((current): CheckResult =>
            current ? { ok: true } : failedWith(READINESS_PHRASES.migrationsPending),
          )
          .catch((error: unknown) => {
            logFailure('migrations', error);
            return failedWith(READINESS_PHRASES.migrationsFailed);
          })
      : Promise.resolve(failedWith(READINESS_PHRASES.migrationsUnchecked)),
  ]);
  const worker = liveness === undefined ? undefined : checkWorker(liveness);
  const checks = { postgres, redis: redisCheck, migrations, ...(worker === undefined ? {} : { worker }) };
  return { ready: postgres.ok && redisCheck.ok && migrations.ok && (worker?.ok ?? true), checks };
}

async function checkRedis(
  redis: RedisClient | undefined,
  logFailure: ReadinessFailureLog,
): Promise<CheckResult> {
  if (redis === undefined) return failedWith(READINESS_PHRASES.noRedis);
  const ping = await pingRedis(redis, CHECK_TIMEOUT_MS);
  if (ping.ok) return ping;
  logFailure('redis', ping.reason);
  return failedWith(READINESS_PHRASES.redisUnreachable);
}

/** Queue names are ours (no address, no secret): they may be shown. */
function checkWorker(liveness: LivenessProbe): CheckResult {
  const { ok, stuckQueues } = liveness();
  return ok ? { ok: true } : failedWith(`${READINESS_PHRASES.workerStuck}: ${stuckQueues.join(', ')}`);
}
