import { sql, type Insertable, type Transaction } from 'kysely';
import type { CheckIn, MemberStatus, Membership, User, UserTag, UserWallet } from '../records/index.js';
import { contentHash, progressInApiNames } from '../records/index.js';
import type { MemberPiiMode } from '../config/config.js';
import { applyPiiPolicy } from '../sync/member-pii.js';
import { recordVersions } from './history.js';
import type { DB } from './schema.js';
import { fromExcluded, type Executor } from './database.js';

// Repository for the member tables (migration 20261124_0005). Every table is keyed by member_id,
// which is what lets `forgetMember` remove a member everywhere.

/** MEMBER_PII and the key its `hash` mode uses (TOKEN_ENCRYPTION_KEY). */
export interface MemberPiiPolicy {
  mode: MemberPiiMode;
  key: Buffer;
}

/** The profile, with email, phone, birthdate and zipcode as MEMBER_PII says (in the raw copy too). */
export async function writeMemberProfile(
  trx: Transaction<DB>,
  user: User,
  pii: MemberPiiPolicy,
  at: Date,
): Promise<void> {
  const { values, raw } = applyPiiPolicy(
    { email: user.email, phone_number: user.phoneNumber, birthdate: user.birthdate, zipcode: user.zipcode },
    user.raw,
    pii.mode,
    pii.key,
  );
  const row = {
    first_name: user.firstName,
    last_name: user.lastName,
    ...values,
    avatar: user.avatar,
    account_status: user.accountStatus,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    raw: JSON.stringify(raw),
    last_seen_at: at,
  };
  await trx
    .insertInto('rewards.members')
    .values({ id: user.id, ...row, first_seen_at: at })
    .onConflict((conflict) => conflict.column('id').doUpdateSet(row))
    .execute();
}

const NO_ACTIVE_STATUS = { has_active_status: false } as const;

/**
 * The member's status row, and a history version when it changed. A 404 "no active record" is a
 * state (has_active_status false), versioned like any other.
 */
export async function writeMemberStatus(
  trx: Transaction<DB>,
  memberId: string,
  status: MemberStatus | null,
  at: Date,
): Promise<void> {
  const raw = status === null ? NO_ACTIVE_STATUS : status.raw;
  const hash = contentHash(raw);
  const row =
    status === null
      ? {
          has_active_status: false,
          status_id: null,
          tier: null,
          level: null,
          track: null,
          token_multiplier: null,
          state: null,
          benefits: null,
          progress: null,
          year_start: null,
          year_end: null,
          started_at: null,
          created_at: null,
          updated_at: null,
          raw: null,
        }
      : {
          has_active_status: true,
          status_id: status.id,
          tier: status.tier,
          level: status.level,
          track: status.track,
          token_multiplier: status.tokenMultiplier,
          state: status.state,
          benefits: JSON.stringify(status.benefits),
          progress: JSON.stringify(progressInApiNames(status.progress)),
          year_start: status.yearStart,
          year_end: status.yearEnd,
          started_at: status.startedAt,
          created_at: status.createdAt,
          updated_at: status.updatedAt,
          raw: JSON.stringify(status.raw),
        };
  await trx
    .insertInto('rewards.member_statuses')
    .values({ member_id: memberId, ...row, content_hash: hash, last_seen_at: at })
    .onConflict((conflict) =>
      conflict.column('member_id').doUpdateSet({ ...row, content_hash: hash, last_seen_at: at }),
    )
    .execute();
  await recordVersions(trx, 'rewards.member_statuses_history', [{ id: memberId, hash, raw }], at);
}

/**
 * Inserts rows of a member table keyed by `id`, a newer read overwriting `update`. (Kysely cannot
 * check a statement over a table chosen by a type parameter; the signature checks the call.)
 */
async function upsertById<T extends 'rewards.member_wallets' | 'rewards.memberships'>(
  trx: Transaction<DB>,
  table: T,
  rows: Insertable<DB[T]>[],
  update: readonly (keyof DB[T] & string)[],
): Promise<void> {
  await trx
    .insertInto(table)
    .values(rows)
    .onConflict((conflict) => conflict.column('id').doUpdateSet(fromExcluded(update) as never))
    .execute();
}

/** Columns a newer read of a wallet, or of a membership, overwrites. */
const WALLET_UPDATES = [
  'member_id',
  'wallet_type',
  'address',
  'updated_at',
  'extra',
  'last_seen_at',
] as const;
const MEMBERSHIP_UPDATES = [
  'check_in_count',
  'last_check_in_date',
  'tier_id',
  'tier_name',
  'raw',
  'content_hash',
  'last_seen_at',
] as const;

/** The member's wallets as listed now (a wallet no longer listed is removed). */
export async function replaceMemberWallets(
  trx: Transaction<DB>,
  memberId: string,
  wallets: readonly UserWallet[],
  at: Date,
): Promise<void> {
  let stale = trx.deleteFrom('rewards.member_wallets').where('member_id', '=', memberId);
  if (wallets.length > 0)
    stale = stale.where(
      'id',
      'not in',
      wallets.map((w) => w.id),
    );
  await stale.execute();
  if (wallets.length === 0) return;
  const rows = wallets.map((w) => ({
    id: w.id,
    member_id: memberId,
    wallet_type: w.walletType,
    address: w.address,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    extra: w.extra == null ? null : JSON.stringify(w.extra),
    last_seen_at: at,
  }));
  await upsertById(trx, 'rewards.member_wallets', rows, WALLET_UPDATES);
}

/**
 * The member's tags as listed now, with their unknown fields in `extra` (docs/schema-drift.md);
 * `type` is kept exactly as given (no case folding).
 */
export async function replaceMemberTags(
  trx: Transaction<DB>,
  memberId: string,
  tags: readonly UserTag[],
  at: Date,
): Promise<void> {
  await trx.deleteFrom('rewards.member_tags').where('member_id', '=', memberId).execute();
  const byType = new Map(tags.map((tag) => [tag.type, tag]));
  if (byType.size === 0) return;
  await trx
    .insertInto('rewards.member_tags')
    .values(
      [...byType.values()].map((tag) => ({
        member_id: memberId,
        type: tag.type,
        metadata: JSON.stringify(tag.metadata),
        created_at: tag.createdAt,
        updated_at: tag.updatedAt,
        extra: tag.extra == null ? null : JSON.stringify(tag.extra),
        last_seen_at: at,
      })),
    )
    .execute();
}

/** What the warehouse holds of a member's visits, for the incremental stop rule. */
export async function memberCheckInFacts(
  db: Executor,
  memberId: string,
): Promise<{ known: Set<string>; oldestOngoing: Date | null }> {
  const rows = await db
    .selectFrom('rewards.member_check_ins')
    .select(['id', 'created_at', 'ended_at'])
    .where('member_id', '=', memberId)
    .execute();
  let oldestOngoing: Date | null = null;
  for (const row of rows) {
    if (row.ended_at === null && (oldestOngoing === null || row.created_at < oldestOngoing))
      oldestOngoing = row.created_at;
  }
  return { known: new Set(rows.map((row) => row.id)), oldestOngoing };
}

/**
 * One page of a member's visits, with their unknown fields in `extra` (docs/schema-drift.md). A
 * known `ended_at` is never replaced by null (a stale read).
 */
export async function upsertMemberCheckIns(
  db: Executor,
  memberId: string,
  checkIns: readonly CheckIn[],
  at: Date,
): Promise<void> {
  const unique = [...new Map(checkIns.map((c) => [c.id, c])).values()];
  if (unique.length === 0) return;
  await db
    .insertInto('rewards.member_check_ins')
    .values(
      unique.map((c) => ({
        id: c.id,
        member_id: memberId,
        location_id: c.locationId,
        restaurant_id: c.restaurantId,
        svc_pay_enabled: c.svcPayEnabled,
        created_at: new Date(c.createdAtMs),
        ended_at: c.endedAtMs === null ? null : new Date(c.endedAtMs),
        extra: c.extra == null ? null : JSON.stringify(c.extra),
        first_seen_at: at,
        last_seen_at: at,
      })),
    )
    .onConflict((conflict) =>
      conflict.column('id').doUpdateSet((eb) => ({
        ended_at: sql`coalesce(excluded.ended_at, ${eb.ref('rewards.member_check_ins.ended_at')})`,
        svc_pay_enabled: eb.ref('excluded.svc_pay_enabled'),
        // Follows the record: a re-read without the unknown field sets it back to null.
        extra: eb.ref('excluded.extra'),
        last_seen_at: eb.ref('excluded.last_seen_at'),
      })),
    )
    .execute();
}

/** One page of memberships, with a history version for each that changed. */
export async function upsertMemberships(
  trx: Transaction<DB>,
  memberId: string,
  memberships: readonly Membership[],
  at: Date,
): Promise<void> {
  const unique = [...new Map(memberships.map((m) => [m.id, m])).values()];
  if (unique.length === 0) return;
  const rows = unique.map((m) => ({
    id: m.id,
    member_id: memberId,
    restaurant_id: m.restaurantId,
    check_in_count: m.checkInCount,
    last_check_in_date: m.lastCheckInDate,
    tier_id: m.membershipTier.id,
    tier_name: m.membershipTier.name,
    raw: JSON.stringify(m.raw),
    content_hash: contentHash(m.raw),
    first_seen_at: at,
    last_seen_at: at,
  }));
  await upsertById(trx, 'rewards.memberships', rows, MEMBERSHIP_UPDATES);
  await recordVersions(
    trx,
    'rewards.memberships_history',
    rows.map((row, i) => ({ id: row.id, hash: row.content_hash, raw: unique[i]!.raw })),
    at,
  );
}
