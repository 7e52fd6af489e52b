import { sql, type Kysely, type Transaction } from 'kysely';
import { MEMBER_DRIFT_RESOURCES } from '../records/schema-drift.js';
import { forgetMemberReads } from './record-reads.js';
import type { DB } from './schema.js';

// `members forget` (docs/members.md lists what it removes): every trace of one member, in one
// transaction.

type Removed = Record<string, number>;

const count = (results: { numDeletedRows: bigint }[]) =>
  results.reduce((sum, result) => sum + Number(result.numDeletedRows), 0);

/**
 * Removes a member from every member table, their history, their rejected records, their
 * connection and their tokens, in one transaction.
 */
export async function forgetMember(db: Kysely<DB>, memberId: string): Promise<Removed> {
  return db.transaction().execute(async (trx) => {
    const removed: Removed = {};
    removed['rejected_records'] = await forgetRejectedRecords(trx, memberId);
    Object.assign(removed, await forgetMemberRows(trx, memberId));
    removed['member_connections'] = count(
      await trx.deleteFrom('rewards.member_connections').where('member_id', '=', memberId).execute(),
    );
    removed['oauth_tokens'] = count(
      await trx.deleteFrom('rewards.oauth_tokens').where('id', '=', `member:${memberId}`).execute(),
    );
    removed['schema_drift_examples'] = await clearMemberDriftExamples(trx);
    // member.needs_reauth events name the member (src/alerts/raise-needs-reauth.ts).
    removed['alerts'] = count(
      await trx
        .deleteFrom('rewards.alerts')
        .where('type', '=', 'member.needs_reauth')
        .where('subject', 'like', `${memberId}:%`)
        .execute(),
    );
    removed['record_reads'] = await forgetMemberReads(trx, memberId);
    return removed;
  });
}

/**
 * Rejected records are found by `member_id` (every member record rejected since migration
 * 20261125_0006) and, for rows stored before, by a payload that names the member: a profile's
 * `id` (its record id) or a status's `user`.
 */
async function forgetRejectedRecords(trx: Transaction<DB>, memberId: string): Promise<number> {
  const rejected = await trx
    .deleteFrom('rewards.rejected_records')
    .where((eb) =>
      eb.or([
        eb('member_id', '=', memberId),
        eb.and([
          eb('stream', '=', 'members'),
          eb.or([
            eb(sql`lower(record_id)`, '=', memberId),
            eb(sql`lower(payload->>'user')`, '=', memberId),
            eb(sql`lower(payload->>'id')`, '=', memberId),
          ]),
        ]),
      ]),
    )
    .executeTakeFirst();
  return Number(rejected.numDeletedRows);
}

/** The member's rows and their history, per table. */
async function forgetMemberRows(trx: Transaction<DB>, memberId: string): Promise<Removed> {
  const removed: Removed = {};
  const membershipIds = trx.selectFrom('rewards.memberships').select('id').where('member_id', '=', memberId);
  removed['memberships_history'] = count(
    await trx.deleteFrom('rewards.memberships_history').where('id', 'in', membershipIds).execute(),
  );
  removed['member_statuses_history'] = count(
    await trx.deleteFrom('rewards.member_statuses_history').where('id', '=', memberId).execute(),
  );
  for (const table of [
    'rewards.memberships',
    'rewards.member_check_ins',
    'rewards.member_tags',
    'rewards.member_wallets',
    'rewards.member_statuses',
  ] as const) {
    removed[table.slice('rewards.'.length)] = count(
      await trx.deleteFrom(table).where('member_id', '=', memberId).execute(),
    );
  }
  removed['members'] = count(await trx.deleteFrom('rewards.members').where('id', '=', memberId).execute());
  return removed;
}

/**
 * A drift example of a member resource may be this member's value, and no row says whose it is:
 * every member resource's example is cleared (the drift itself stays).
 */
async function clearMemberDriftExamples(trx: Transaction<DB>): Promise<number> {
  const result = await trx
    .updateTable('rewards.schema_drift')
    .set({ example: null })
    .where('resource', 'in', [...MEMBER_DRIFT_RESOURCES])
    .where('example', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
