import { sql, type Kysely } from 'kysely';
import type { DB } from '../warehouse/schema.js';

// The three questions the demo answers, as an analyst would write them against schema `rewards`.

export async function busiestRestaurants(db: Kysely<DB>, now: Date, limit = 5) {
  const { rows } = await sql<{ name: string; cohort: string | null; check_ins: string }>`
    select r.name, r.cohort, count(*) as check_ins
    from rewards.check_ins c join rewards.restaurants r on r.id = c.restaurant_id
    where c.created_at >= ${now}::timestamptz - interval '7 days'
    group by r.id, r.name, r.cohort
    order by count(*) desc, r.name
    limit ${limit}`.execute(db);
  return rows.map((row) => ({ name: row.name, cohort: row.cohort, checkIns: Number(row.check_ins) }));
}

export async function payEnabledShare(db: Kysely<DB>) {
  const { rows } = await sql<{ check_ins: string; pay: string }>`
    select coalesce(sum(check_ins), 0) as check_ins, coalesce(sum(svc_pay_check_ins), 0) as pay
    from rewards.check_ins_daily`.execute(db);
  const total = Number(rows[0]?.check_ins ?? 0);
  const pay = Number(rows[0]?.pay ?? 0);
  return { total, pay, share: total === 0 ? 0 : pay / total };
}

export async function medianVisitByCohort(db: Kysely<DB>) {
  const { rows } = await sql<{ cohort: string | null; visits: string; median_minutes: number | null }>`
    select r.cohort, count(*) as visits,
      percentile_cont(0.5) within group (order by extract(epoch from (c.ended_at - c.created_at)) / 60.0) as median_minutes
    from rewards.check_ins c join rewards.restaurants r on r.id = c.restaurant_id
    where c.ended_at is not null
    group by r.cohort
    order by r.cohort`.execute(db);
  return rows.map((row) => ({
    cohort: row.cohort ?? '(none)',
    visits: Number(row.visits),
    medianMinutes: row.median_minutes,
  }));
}

/** Members' visits by their status tier (a member with no active status counts as "no active status"). */
export async function visitsByTier(db: Kysely<DB>) {
  const { rows } = await sql<{ tier: string | null; members: string; visits: string }>`
    select s.tier, count(distinct m.id) as members, count(v.id) as visits
    from rewards.members m
    left join rewards.member_statuses s on s.member_id = m.id
    left join rewards.member_check_ins v on v.member_id = m.id
    group by s.tier
    order by count(v.id) desc`.execute(db);
  return rows.map((row) => ({
    // Tiers may hold a newline (the API's own formatting): shown on one line here.
    tier: row.tier === null ? '(no active status)' : row.tier.replace(/\s*\n\s*/g, ' '),
    members: Number(row.members),
    visits: Number(row.visits),
  }));
}
