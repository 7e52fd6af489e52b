import { sql } from 'kysely';
import { monthsCovering, parseMonthPartition, type MonthPartition } from '../sync/retention.js';
import type { Executor } from './database.js';

/** The month partitions of rewards.check_ins (the default partition aside), oldest first. */
export async function listCheckInPartitions(db: Executor): Promise<MonthPartition[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'rewards.check_ins'::regclass`.execute(db);
  return rows
    .map((row) => parseMonthPartition(row.name))
    .filter((partition): partition is MonthPartition => partition !== null)
    .sort((a, b) => a.start - b.start);
}

/**
 * Creates the month partitions [from, to) needs, and the month after, before a pass pages into
 * them (rewards.create_check_ins_month: idempotent, safe when processes race, moves rows the
 * default partition caught for that month). Existing months cost one catalogue read. Returns
 * the names created.
 */
export async function ensureCheckInMonths(db: Executor, from: Date, to: Date): Promise<string[]> {
  const existing = new Set((await listCheckInPartitions(db)).map((partition) => partition.start));
  const created: string[] = [];
  for (const month of monthsCovering(from.getTime(), to.getTime())) {
    if (existing.has(month)) continue;
    const day = new Date(month).toISOString().slice(0, 10);
    const { rows } = await sql<{ created: boolean }>`
      select rewards.create_check_ins_month(${day}::date) as created`.execute(db);
    if (rows[0]?.created === true) created.push(day);
  }
  return created;
}
