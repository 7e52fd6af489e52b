import { sql, type Kysely, type RawBuilder } from 'kysely';

// Issue 26. Two changes to what the members stream stores:
//
// 1. `rejected_records.member_id`: every record the members stream rejects (a profile, a status,
//    a visit, a membership) names the member it belongs to, so `members forget` finds all of them;
//    a visit or a membership does not carry the member in its payload. Rows stored before this
//    migration are attributed where their payload shows the member (a profile's `id`, a status's
//    `user`).
// 2. `member_statuses.progress` keeps the partner API's field names (`token_deposit`, `check_ins`,
//    `spend_threshold`, …): rows written with the earlier camelCase names are rewritten, values
//    untouched (big-integer amounts stay strings). The history table keeps `raw` as received, which
//    already has the API's names; any camelCase progress there is rewritten too.
//
// Written to be safe to run again (`if not exists`, rewrites only rows that still need it).

const RENAMES: ReadonlyArray<readonly [string, string]> = [
  ['checkIns', 'check_ins'],
  ['checkInThreshold', 'check_in_threshold'],
  ['spendThreshold', 'spend_threshold'],
  ['tokenDeposit', 'token_deposit'],
  ['tokenDepositThreshold', 'token_deposit_threshold'],
];

/** `jsonb` expression: `value` with its top-level keys renamed by `pairs` (from -> to). */
function renamedKeys(value: RawBuilder<unknown>, pairs: ReadonlyArray<readonly [string, string]>) {
  const cases = sql.join(
    pairs.map(([from, to]) => sql`when ${sql.lit(from)} then ${sql.lit(to)}`),
    sql` `,
  );
  return sql`(select coalesce(jsonb_object_agg(case e.key ${cases} else e.key end, e.value), '{}'::jsonb)
    from jsonb_each(${value}) as e)`;
}

function needsRename(value: RawBuilder<unknown>, pairs: ReadonlyArray<readonly [string, string]>) {
  const keys = sql.join(pairs.map(([from]) => sql.lit(from)));
  return sql`jsonb_typeof(${value}) = 'object' and ${value} ?| array[${keys}]`;
}

async function renameProgressKeys(
  db: Kysely<any>,
  pairs: ReadonlyArray<readonly [string, string]>,
): Promise<void> {
  const progress = sql.raw('progress');
  await sql`update rewards.member_statuses set progress = ${renamedKeys(progress, pairs)}
    where ${needsRename(progress, pairs)}`.execute(db);
  const historyProgress = sql.raw(`raw->'progress'`);
  await sql`update rewards.member_statuses_history
    set raw = jsonb_set(raw, '{progress}', ${renamedKeys(historyProgress, pairs)})
    where jsonb_typeof(raw) = 'object' and ${needsRename(historyProgress, pairs)}`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table rewards.rejected_records add column if not exists member_id uuid;
    create index if not exists rejected_records_member_idx on rewards.rejected_records (member_id)
      where member_id is not null;
    update rewards.rejected_records set member_id = lower(record_id)::uuid
      where stream = 'members' and member_id is null and payload->>'object' = 'user'
        and record_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
    update rewards.rejected_records set member_id = lower(payload->>'user')::uuid
      where stream = 'members' and member_id is null and payload->>'object' = 'status'
        and payload->>'user' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
  `.execute(db);
  await renameProgressKeys(db, RENAMES);
}

export async function down(db: Kysely<any>): Promise<void> {
  await renameProgressKeys(
    db,
    RENAMES.map(([from, to]) => [to, from] as const),
  );
  await sql`
    drop index if exists rewards.rejected_records_member_idx;
    alter table rewards.rejected_records drop column if exists member_id;
  `.execute(db);
}
