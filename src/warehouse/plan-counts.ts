import { sql } from 'kysely';
import { isReadKind, type ReadKind } from '../sync/read-cadence.js';
import type { PlanInput } from '../sync/freshness-plan.js';
import type { Executor } from './database.js';

// What `rewards-etl plan` projects from (docs/freshness.md): how many records the warehouse holds
// of each kind, the feed's recent rate, and the intervals learned so far.

export async function readPlanCounts(db: Executor, now: Date): Promise<PlanInput['counts']> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const { rows } = await sql<Record<keyof PlanInput['counts'], string>>`
    select
      (select count(*) from rewards.restaurants where deleted_at is null) as "restaurants",
      (select count(*) from rewards.locations where deleted_at is null) as "locations",
      (select count(*) from rewards.challenges where deleted_at is null) as "challenges",
      (select count(*) from rewards.member_connections where status = 'active') as "activeMembers",
      (select count(*) from rewards.payment_intents where status = 'pending') as "openIntents",
      (select count(*) / 24.0 from rewards.check_ins where created_at >= ${dayAgo}) as "checkInsPerHour"
  `.execute(db);
  const row = rows[0];
  const n = (value: string | undefined) => Number(value ?? 0);
  return {
    restaurants: n(row?.restaurants),
    locations: n(row?.locations),
    challenges: n(row?.challenges),
    activeMembers: n(row?.activeMembers),
    openIntents: n(row?.openIntents),
    checkInsPerHour: n(row?.checkInsPerHour),
  };
}

/** The median interval learned per kind, over the records of active members. */
export async function readLearnedIntervals(db: Executor): Promise<Partial<Record<ReadKind, number>>> {
  const { rows } = await sql<{ kind: string; median: number }>`
    select kind, percentile_cont(0.5) within group (order by interval_seconds) as median
    from rewards.record_reads
    where kind not like 'member.%' or record_id in (
      select member_id::text from rewards.member_connections where status = 'active')
    group by kind
  `.execute(db);
  const learned: Partial<Record<ReadKind, number>> = {};
  for (const row of rows) if (isReadKind(row.kind)) learned[row.kind] = Number(row.median) * 1000;
  return learned;
}
