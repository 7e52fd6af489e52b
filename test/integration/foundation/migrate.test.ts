import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations } from '../../../migrations/index.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest, migrationsCurrent } from '../../../src/warehouse/migrate.js';
import { freshDatabaseUrl } from '../../helpers/db.js';

// Column names of CONTRACT.md's warehouse table: analysts rely on them.
const CONTRACT_COLUMNS: Record<string, string[]> = {
  restaurants:
    'id name cuisine cohort price tags asset website_url instagram_url created_at updated_at raw first_seen_at last_seen_at deleted_at'.split(
      ' ',
    ),
  neighborhoods: 'id name region first_seen_at last_seen_at'.split(' '),
  locations:
    'id restaurant_id neighborhood_id name slug street street2 city state zipcode country latitude longitude phone_number time_zone payments_enabled is_club reservation_url reservations_enabled google_place_id created_at updated_at raw first_seen_at last_seen_at'.split(
      ' ',
    ),
  location_open_hours: 'location_id hours fetched_at'.split(' '),
  check_ins:
    'id location_id restaurant_id svc_pay_enabled created_at ended_at first_seen_at last_seen_at'.split(' '),
  challenges:
    'id restaurant_id type title description image threshold token_reward_value token_reward_currency start_time end_time terms accepted_currencies created_at updated_at raw first_seen_at last_seen_at deleted_at'.split(
      ' ',
    ),
  restaurants_history: 'id valid_from valid_to raw'.split(' '),
  locations_history: 'id valid_from valid_to raw'.split(' '),
  challenges_history: 'id valid_from valid_to raw'.split(' '),
  balance_snapshots:
    'account_balance_id observed_at owner_id balance_value balance_currency balance_usd_cents'.split(' '),
  payment_intents:
    'id payer_account_balance_id payee_account_balance_id amount_value amount_currency description status expires_at canceled_at paid_at refunded_at metadata created_at updated_at first_seen_at last_polled_at'.split(
      ' ',
    ),
  payment_intent_transitions: 'id payment_intent_id from_status to_status observed_at'.split(' '),
  alerts: 'id type payment_intent_id payload created_at delivered_at attempts last_error'.split(' '),
  sync_windows:
    'stream window_start window_end status api_total_count rows_seen pages attempts completed_at last_error'.split(
      ' ',
    ),
  sync_runs: 'id stream started_at finished_at status requests rows error'.split(' '),
  rejected_records: 'id stream record_id reason payload seen_at'.split(' '),
  check_ins_daily: 'day restaurant_id location_id check_ins svc_pay_check_ins median_visit_minutes'.split(
    ' ',
  ),
};

const EXACT_TYPES: Array<[string, string, string]> = [
  ['challenges', 'token_reward_value', 'numeric(78,0)'],
  ['balance_snapshots', 'balance_value', 'numeric(78,0)'],
  ['payment_intents', 'amount_value', 'numeric(78,0)'],
  ['balance_snapshots', 'balance_usd_cents', 'bigint'],
  ['check_ins', 'created_at', 'timestamp with time zone'],
  ['restaurants', 'cuisine', 'text[]'],
  ['restaurants', 'raw', 'jsonb'],
];

describe('migrate', () => {
  const target = freshDatabaseUrl('migrate');
  afterAll(() => target.drop());

  it('creates the missing database, then is safe when two processes run it at once, and when repeated', async () => {
    const [first, second] = await Promise.all([ensureDatabase(target.url), ensureDatabase(target.url)]);
    expect([first.created, second.created].filter(Boolean)).toHaveLength(1);

    const a = createDatabase({ url: target.url, maxConnections: 3 });
    const b = createDatabase({ url: target.url, maxConnections: 3 });
    try {
      const [resultA, resultB] = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
      // Exactly one of them applied the migrations; the other found them applied.
      expect([...resultA.applied, ...resultB.applied]).toEqual(Object.keys(migrations));
      expect(await migrateToLatest(a)).toEqual({ applied: [] });
      expect(await migrationsCurrent(a)).toBe(true);

      const { rows } = await sql<{ table_name: string; column_name: string; type: string }>`
        select c.relname as table_name, a.attname as column_name, format_type(a.atttypid, a.atttypmod) as type
        from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'rewards' and a.attnum > 0 and not a.attisdropped`.execute(a);
      const columns = new Map<string, Map<string, string>>();
      for (const row of rows) {
        const table = columns.get(row.table_name) ?? new Map<string, string>();
        table.set(row.column_name, row.type);
        columns.set(row.table_name, table);
      }
      for (const [table, names] of Object.entries(CONTRACT_COLUMNS)) {
        expect([...(columns.get(table)?.keys() ?? [])], table).toEqual(expect.arrayContaining(names));
      }
      for (const [table, column, type] of EXACT_TYPES) {
        expect(columns.get(table)?.get(column), `${table}.${column}`).toBe(type);
      }
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
    }
  });
});
