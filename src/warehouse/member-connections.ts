import { sql } from 'kysely';
import type { MemberConnectionStatus } from './schema.js';
import type { Executor } from './database.js';

// A member's OAuth connection and its sync bookkeeping (rewards.member_connections, migration
// 20261124_0005); the member's own data is written by members.ts.

export interface MemberConnection {
  memberId: string;
  status: MemberConnectionStatus;
  scopes: string[];
  connectedAt: Date;
  lastSyncedAt: Date | null;
  lastSuccessAt: Date | null;
  lastError: string | null;
  checkInsResumePage: number | null;
}

const connectionColumns = [
  'member_id',
  'status',
  'scopes',
  'connected_at',
  'last_synced_at',
  'last_success_at',
  'last_error',
  'check_ins_resume_page',
] as const;

function toConnection(row: {
  member_id: string;
  status: MemberConnectionStatus;
  scopes: string[];
  connected_at: Date;
  last_synced_at: Date | null;
  last_success_at: Date | null;
  last_error: string | null;
  check_ins_resume_page: number | null;
}): MemberConnection {
  return {
    memberId: row.member_id,
    status: row.status,
    scopes: row.scopes,
    connectedAt: row.connected_at,
    lastSyncedAt: row.last_synced_at,
    lastSuccessAt: row.last_success_at,
    lastError: row.last_error,
    checkInsResumePage: row.check_ins_resume_page,
  };
}

/** A new or renewed connection: active again, errors cleared (the tokens were just stored). */
export async function saveConnection(
  db: Executor,
  input: { memberId: string; scopes: string[]; at: Date },
): Promise<void> {
  await db
    .insertInto('rewards.member_connections')
    .values({ member_id: input.memberId, status: 'active', scopes: input.scopes, connected_at: input.at })
    .onConflict((conflict) =>
      conflict.column('member_id').doUpdateSet({
        status: 'active',
        scopes: input.scopes,
        connected_at: input.at,
        last_error: null,
        last_error_at: null,
      }),
    )
    .execute();
}

export async function listConnections(db: Executor): Promise<MemberConnection[]> {
  const rows = await db
    .selectFrom('rewards.member_connections')
    .select(connectionColumns)
    .orderBy('connected_at')
    .execute();
  return rows.map(toConnection);
}

/** Active connections, the longest unsynced first (never synced before all). */
export async function stalestConnections(db: Executor, limit: number): Promise<MemberConnection[]> {
  const rows = await db
    .selectFrom('rewards.member_connections')
    .select(connectionColumns)
    .where('status', '=', 'active')
    .orderBy(sql`last_synced_at nulls first`)
    .orderBy('member_id')
    .limit(limit)
    .execute();
  return rows.map(toConnection);
}

export async function countConnectionsByStatus(
  db: Executor,
): Promise<Record<MemberConnectionStatus, number>> {
  const rows = await db
    .selectFrom('rewards.member_connections')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
    .groupBy('status')
    .execute();
  const counts: Record<MemberConnectionStatus, number> = { active: 0, revoked: 0, needs_reauth: 0 };
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

/**
 * The outcome of one member's sync: success; everything but the profile (rejected, so not a
 * success: the error says why, the visits' resume page still moves); or an error (and the state it
 * leaves the connection in).
 */
export async function recordMemberSync(
  db: Executor,
  memberId: string,
  outcome:
    | { ok: true; at: Date; checkInsResumePage: number | null }
    | { ok: 'without-profile'; at: Date; checkInsResumePage: number | null; error: string }
    | { ok: false; at: Date; error: string; status: MemberConnectionStatus },
): Promise<void> {
  await db
    .updateTable('rewards.member_connections')
    .set(
      outcome.ok === true
        ? {
            last_synced_at: outcome.at,
            last_success_at: outcome.at,
            last_error: null,
            last_error_at: null,
            check_ins_resume_page: outcome.checkInsResumePage,
          }
        : outcome.ok === 'without-profile'
          ? {
              last_synced_at: outcome.at,
              last_error: outcome.error.slice(0, 500),
              last_error_at: outcome.at,
              check_ins_resume_page: outcome.checkInsResumePage,
            }
          : {
              last_synced_at: outcome.at,
              last_error: outcome.error.slice(0, 500),
              last_error_at: outcome.at,
              status: outcome.status,
            },
    )
    .where('member_id', '=', memberId)
    .execute();
}
