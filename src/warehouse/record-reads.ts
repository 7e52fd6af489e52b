import { sql } from 'kysely';
import type { MemberKind } from '../sync/member-read-plan.js';
import { isReadKind, type ReadKind, type ReadState } from '../sync/read-cadence.js';
import type { Executor } from './database.js';

// Repository for rewards.record_reads (migration 20261126_0012, docs/freshness.md): when each
// record read on an adaptive cadence was last read, last found changed, and is due next.

/** How fresh one kind of record is (status, the status page; docs/freshness.md). */
export interface RecordKindFreshness {
  kind: string;
  records: number;
  ceilingSeconds: number | null;
  /** Age since each record was last read, in seconds. */
  sinceReadP50Seconds: number | null;
  sinceReadP95Seconds: number | null;
  /** Age since a read last found each record changed (records never seen changed are left out). */
  sinceChangedP50Seconds: number | null;
  sinceChangedP95Seconds: number | null;
  /** Reads that found nothing new, over all reads so far. */
  unchangedShare: number | null;
  /** Records read longer ago than their kind's ceiling: the budget does not keep up. */
  pastCeiling: number;
}

/** The read states of every member with an active connection (kinds not read yet have no row). */
export async function activeMemberReadStates(db: Executor): Promise<ReadState[]> {
  const rows = await db
    .selectFrom('rewards.record_reads as r')
    // member_id is a uuid, record_id text (records of other kinds have other ids).
    .innerJoin('rewards.member_connections as c', (join) =>
      join.on(sql`c.member_id::text`, '=', sql.ref('r.record_id')),
    )
    .select(['r.kind', 'r.record_id', 'r.last_read_at', 'r.last_changed_at', 'r.interval_seconds'])
    .where('c.status', '=', 'active')
    .where('r.kind', 'like', 'member.%')
    .execute();
  return rows.flatMap((row) =>
    isReadKind(row.kind)
      ? [
          {
            kind: row.kind,
            recordId: row.record_id,
            lastReadAtMs: row.last_read_at.getTime(),
            lastChangedAtMs: row.last_changed_at?.getTime() ?? null,
            intervalMs: row.interval_seconds * 1000,
          },
        ]
      : [],
  );
}

/** The read states of every record of one kind (records never read have no row). */
export async function readStatesOfKind(db: Executor, kind: ReadKind): Promise<ReadState[]> {
  const rows = await db
    .selectFrom('rewards.record_reads')
    .select(['record_id', 'last_read_at', 'last_changed_at', 'interval_seconds'])
    .where('kind', '=', kind)
    .execute();
  return rows.map((row) => ({
    kind,
    recordId: row.record_id,
    lastReadAtMs: row.last_read_at.getTime(),
    lastChangedAtMs: row.last_changed_at?.getTime() ?? null,
    intervalMs: row.interval_seconds * 1000,
  }));
}

export interface ReadOutcome {
  kind: ReadKind;
  recordId: string;
  changed: boolean;
  /** The interval learned from this read (nextReadInterval). */
  intervalMs: number;
}

/** Records reads made at `at`: the next one is due an interval later; a change moves last_changed_at. */
export async function recordReads(db: Executor, reads: readonly ReadOutcome[], at: Date): Promise<void> {
  if (reads.length === 0) return;
  await db
    .insertInto('rewards.record_reads')
    .values(
      reads.map((read) => {
        const intervalSeconds = Math.max(1, Math.round(read.intervalMs / 1000));
        return {
          kind: read.kind,
          record_id: read.recordId,
          last_read_at: at,
          last_changed_at: read.changed ? at : null,
          interval_seconds: intervalSeconds,
          next_due_at: new Date(at.getTime() + intervalSeconds * 1000),
          reads: 1,
          unchanged_reads: read.changed ? 0 : 1,
        };
      }),
    )
    .onConflict((conflict) =>
      conflict.columns(['kind', 'record_id']).doUpdateSet((eb) => ({
        last_read_at: eb.ref('excluded.last_read_at'),
        last_changed_at: sql`coalesce(excluded.last_changed_at, ${eb.ref('rewards.record_reads.last_changed_at')})`,
        interval_seconds: eb.ref('excluded.interval_seconds'),
        next_due_at: eb.ref('excluded.next_due_at'),
        reads: sql`${eb.ref('rewards.record_reads.reads')} + 1`,
        unchanged_reads: sql`${eb.ref('rewards.record_reads.unchanged_reads')} + excluded.unchanged_reads`,
      })),
    )
    .execute();
}

/**
 * A fingerprint of what the warehouse holds of each kind of a member's records: equal before and
 * after a read when the read brought nothing new. Visits: how many and how many ended (a visit is
 * only ever added or ended); the others: their content, in a stable order.
 */
export async function memberRecordFingerprints(
  db: Executor,
  memberId: string,
): Promise<Record<MemberKind, string>> {
  const { rows } = await sql<
    Record<'profile' | 'status' | 'wallets' | 'tags' | 'visits' | 'memberships', string | null>
  >`
    select
      (select md5(m.raw::text) from rewards.members m where m.id = ${memberId}) as profile,
      (select s.content_hash from rewards.member_statuses s where s.member_id = ${memberId}) as status,
      (select md5(string_agg(w.id || '|' || coalesce(w.address, '') || '|' || coalesce(w.updated_at::text, ''), ',' order by w.id))
         from rewards.member_wallets w where w.member_id = ${memberId}) as wallets,
      (select md5(string_agg(t.type || '|' || coalesce(t.metadata::text, '') || '|' || coalesce(t.updated_at::text, ''), ',' order by t.type))
         from rewards.member_tags t where t.member_id = ${memberId}) as tags,
      (select count(*)::text || '/' || count(v.ended_at)::text
         from rewards.member_check_ins v where v.member_id = ${memberId}) as visits,
      (select md5(string_agg(ms.id || '|' || ms.content_hash, ',' order by ms.id))
         from rewards.memberships ms where ms.member_id = ${memberId}) as memberships
  `.execute(db);
  const row = rows[0];
  const value = (text: string | null | undefined) => text ?? '';
  return {
    'member.profile': value(row?.profile),
    'member.status': value(row?.status),
    'member.wallets': value(row?.wallets),
    'member.tags': value(row?.tags),
    'member.visits': value(row?.visits),
    'member.memberships': value(row?.memberships),
  };
}

/** Removes a member's read states (part of `members forget`). */
export async function forgetMemberReads(db: Executor, memberId: string): Promise<number> {
  const result = await db
    .deleteFrom('rewards.record_reads')
    .where('record_id', '=', memberId)
    .where('kind', 'like', 'member.%')
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * p50/p95 ages per kind at `now`, and how many records are past their ceiling; members count only
 * while their connection is active (a connection needing re-authorization is not read).
 */
export async function readFreshness(
  db: Executor,
  now: Date,
  ceilingSecondsOf: (kind: ReadKind) => number,
): Promise<RecordKindFreshness[]> {
  const { rows } = await sql<{
    kind: string;
    records: string;
    read_p50: number | null;
    read_p95: number | null;
    changed_p50: number | null;
    changed_p95: number | null;
    reads: string;
    unchanged: string;
  }>`
    select kind, count(*)::text as records,
      percentile_cont(0.5) within group (order by extract(epoch from (${now}::timestamptz - last_read_at))) as read_p50,
      percentile_cont(0.95) within group (order by extract(epoch from (${now}::timestamptz - last_read_at))) as read_p95,
      percentile_cont(0.5) within group (order by extract(epoch from (${now}::timestamptz - last_changed_at))) as changed_p50,
      percentile_cont(0.95) within group (order by extract(epoch from (${now}::timestamptz - last_changed_at))) as changed_p95,
      sum(reads)::text as reads, sum(unchanged_reads)::text as unchanged
    from rewards.record_reads
    where kind not like 'member.%' or record_id in (
      select member_id::text from rewards.member_connections where status = 'active')
    group by kind order by kind
  `.execute(db);
  const result: RecordKindFreshness[] = [];
  for (const row of rows) {
    const reads = Number(row.reads);
    const ceiling = isReadKind(row.kind) ? ceilingSecondsOf(row.kind) : null;
    result.push({
      kind: row.kind,
      records: Number(row.records),
      ceilingSeconds: ceiling,
      sinceReadP50Seconds: roundOrNull(row.read_p50),
      sinceReadP95Seconds: roundOrNull(row.read_p95),
      sinceChangedP50Seconds: roundOrNull(row.changed_p50),
      sinceChangedP95Seconds: roundOrNull(row.changed_p95),
      unchangedShare: reads === 0 ? null : Number(row.unchanged) / reads,
      pastCeiling: ceiling === null ? 0 : await countPastCeiling(db, row.kind, now, ceiling),
    });
  }
  return result;
}

async function countPastCeiling(
  db: Executor,
  kind: string,
  now: Date,
  ceilingSeconds: number,
): Promise<number> {
  const row = await db
    .selectFrom('rewards.record_reads')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('kind', '=', kind)
    .where('last_read_at', '<', new Date(now.getTime() - ceilingSeconds * 1000))
    // A member whose connection is not active is not read: their records age, and that is not a backlog.
    .where((eb) =>
      eb.or([
        eb('kind', 'not like', 'member.%'),
        eb(
          'record_id',
          'in',
          eb
            .selectFrom('rewards.member_connections')
            .select(sql<string>`member_id::text`.as('id'))
            .where('status', '=', 'active'),
        ),
      ]),
    )
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

function roundOrNull(value: number | null): number | null {
  return value === null ? null : Math.round(Number(value));
}

/** API requests of the passes started since `since`, per stream (sync_runs.requests). */
export async function readRequestsSince(
  db: Executor,
  streams: readonly string[],
  since: Date,
): Promise<Array<{ stream: string; requests: number }>> {
  const rows = await db
    .selectFrom('rewards.sync_runs')
    .select(['stream', (eb) => eb.fn.sum<string>('requests').as('requests')])
    .where('started_at', '>=', since)
    .groupBy('stream')
    .execute();
  const byStream = new Map(rows.map((row) => [row.stream, Number(row.requests)]));
  return streams.map((stream) => ({ stream, requests: byStream.get(stream) ?? 0 }));
}

/**
 * Member records due now (`next_due_at` passed, or never read) of active connections: what the
 * members would ask of the one budget (status's BUDGET section).
 */
export async function countDueMemberRecords(
  db: Executor,
  now: Date,
  kindsPerMember: number,
): Promise<number> {
  const row = await sql<{ due: string }>`
    with active as (
      select member_id::text as id from rewards.member_connections where status = 'active'),
    member_reads as (
      select r.next_due_at from rewards.record_reads r join active a on a.id = r.record_id
      where r.kind like 'member.%')
    select (select count(*) from member_reads where next_due_at <= ${now})
      + greatest(0, (select count(*) from active) * ${kindsPerMember} - (select count(*) from member_reads)) as due
  `.execute(db);
  return Number(row.rows[0]?.due ?? 0);
}
