import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase } from '../../src/warehouse/database.js';
import type { DB } from '../../src/warehouse/schema.js';
import { ADMIN_URL, databaseUrl } from './postgres.js';
import { runSuffix } from './test-run.js';

export interface TestDatabase {
  name: string;
  url: string;
  db: Kysely<DB>;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file (cloned from the run's template). */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const name = databaseName(label.replace(/[^a-z0-9_]/gi, '_').toLowerCase());
  // Per test run, made by global-setup.ts, so two runs on one machine never share a template.
  await adminQuery(`create database ${name} template ${inject('templateDatabase')}`);
  const url = databaseUrl(name);
  const db = createDatabase({ url, maxConnections: 5 });
  return {
    name,
    url,
    db,
    async drop() {
      await db.destroy();
      await dropDatabase(name);
    },
  };
}

/** A database name that does not exist yet, for tests of `migrate` creating it. */
export function freshDatabaseUrl(label = 'fresh'): { name: string; url: string; drop(): Promise<void> } {
  const name = databaseName(label);
  return {
    name,
    url: databaseUrl(name),
    drop: () => dropDatabase(name),
  };
}

/**
 * `rewards_etl_<label>_<random>_r<run id>`: the run id lets a later run drop what a killed one left
 * (test/helpers/leftovers.ts). The label is cut so the name stays within Postgres's 63 bytes.
 */
function databaseName(label: string): string {
  return `rewards_etl_${label.slice(0, 28)}_${randomBytes(4).toString('hex')}${runSuffix()}`;
}

/**
 * Drops a test database once the sessions its pools just closed are gone (up to 2 s), then with
 * FORCE. A pool's end() resolves before its clients' sockets close; forcing the drop at that
 * moment hands a closing client a FATAL it reports as an uncaught error.
 */
async function dropDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    for (let waited = 0; waited < 2_000; waited += 50) {
      const { rows } = await client.query<{ n: string }>(
        'select count(*) as n from pg_stat_activity where datname = $1',
        [name],
      );
      if (Number(rows[0]?.n ?? 0) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
  await adminQuery(`drop database if exists ${name} with (force)`);
}

async function adminQuery(text: string): Promise<void> {
  // Cloning fails while another session is connected to the template; retry briefly.
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      await client.query(text);
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== '55006' || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    } finally {
      await client.end();
    }
  }
}

/**
 * Runs `work` while the warehouse refuses to write the row `id` of `table` with a data error
 * (SQLSTATE `sqlstate`, class 22): a value our validation cannot know about, refused by Postgres
 * itself through a trigger. The trigger is gone afterwards, whatever `work` did.
 */
export async function whileRowRefused<T>(
  db: Kysely<DB>,
  target: { table: string; id: string; sqlstate: string },
  work: () => Promise<T>,
): Promise<T> {
  const { sql } = await import('kysely');
  const table = sql.table(`rewards.${target.table}`);
  await sql`
    create function rewards.refuse_one() returns trigger language plpgsql as $$
    begin
      if new.id = ${sql.lit(target.id)}::uuid then
        raise exception 'value refused for this test' using errcode = ${sql.lit(target.sqlstate)};
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger refuse_one before insert or update on ${table}
    for each row execute function rewards.refuse_one()`.execute(db);
  try {
    return await work();
  } finally {
    await sql`drop trigger refuse_one on ${table}`.execute(db);
    await sql`drop function rewards.refuse_one()`.execute(db);
  }
}
