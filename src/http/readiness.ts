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

function failed(error: unknown): CheckResult {
  return { ok: false, error: error instanceof Error ? error.message : String(error) };
}

/**
 * Ready = Postgres answers, Redis answers PING, and the schema is at the latest migration (a
 * worker on an old schema would write wrong rows). Each check is bounded in time, so a probe
 * never hangs on a dead dependency.
 */
export async function checkReadiness(db: Kysely<DB>, redis: Redis | undefined): Promise<Readiness> {
  const postgres = await withTimeout(sql`select 1`.execute(db), CHECK_TIMEOUT_MS, 'postgres')
    .then((): CheckResult => ({ ok: true }))
    .catch(failed);
  const [redisCheck, migrations] = await Promise.all([
    redis === undefined
      ? Promise.resolve<CheckResult>({ ok: false, error: 'no Redis connection' })
      : pingRedis(redis, CHECK_TIMEOUT_MS).then((r): CheckResult =>
          r.ok ? r : { ok: false, error: r.reason },
        ),
    postgres.ok
      ? withTimeout(migrationsCurrent(db), CHECK_TIMEOUT_MS, 'migration check')
          .then((current): CheckResult =>
            current ? { ok: true } : { ok: false, error: 'pending migrations: run `rewards-etl migrate`' },
          )
          .catch(failed)
      : Promise.resolve<CheckResult>({ ok: false, error: 'not checked: postgres unreachable' }),
  ]);
  const checks = { postgres, redis: redisCheck, migrations };
  return { ready: postgres.ok && redisCheck.ok && migrations.ok, checks };
}
