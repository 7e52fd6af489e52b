import { sql, type Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import { pingRedis, withTimeout } from '../status/queue-depths.js';
import type { DB } from '../warehouse/schema.js';
import { migrationsCurrent } from '../warehouse/migrate.js';

const CHECK_TIMEOUT_MS = 3_000;

export type CheckResult = { ok: true } | { ok: false; error: string };

export interface Readiness {
  ready: boolean;
  checks: { postgres: CheckResult; redis: CheckResult; migrations: CheckResult };
}

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
  redis: Redis | undefined,
  logFailure: ReadinessFailureLog = () => undefined,
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
  const checks = { postgres, redis: redisCheck, migrations };
  return { ready: postgres.ok && redisCheck.ok && migrations.ok, checks };
}

async function checkRedis(redis: Redis | undefined, logFailure: ReadinessFailureLog): Promise<CheckResult> {
  if (redis === undefined) return failedWith(READINESS_PHRASES.noRedis);
  const ping = await pingRedis(redis, CHECK_TIMEOUT_MS);
  if (ping.ok) return ping;
  logFailure('redis', ping.reason);
  return failedWith(READINESS_PHRASES.redisUnreachable);
}
