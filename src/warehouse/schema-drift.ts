import { sql } from 'kysely';
import type { DriftChange, DriftCount } from '../records/schema-drift.js';
import { exampleJson } from '../records/schema-drift.js';
import type { Executor } from './database.js';

/** A drift row first recorded by this call, with its event's id when one was raised. */
export interface NewDrift {
  resource: string;
  fieldPath: string;
  change: DriftChange;
  count: number;
  alertId: string | null;
}

/**
 * Records a page's (or a pass's) drift of one resource in ONE statement, whatever its size: one
 * upsert per (resource, field, change) adds the count and moves last_seen (Postgres's now()); a row
 * keeps the latest example; a row met for the first time, when `raiseEvent`, gets its `schema.drift` event
 * in the same statement (unique per (type, subject): a second pass or process that also sees it new
 * raises nothing). `protectExample` turns an example's JSON text into what may be stored (members
 * follow MEMBER_PII); null stores no example. Returns the rows that were new.
 */
export async function recordSchemaDrift(
  db: Executor,
  input: {
    resource: string;
    counts: readonly DriftCount[];
    raiseEvent: boolean;
    protectExample?: (jsonText: string) => string | null;
  },
): Promise<NewDrift[]> {
  const { resource, counts } = input;
  if (counts.length === 0) return [];
  const examples = counts.map((one) => exampleJson(one.example, input.protectExample));
  const { rows } = await sql<{
    field_path: string;
    change: DriftChange;
    count: string;
    alert_id: string | null;
  }>`
    with upserted as (
      insert into rewards.schema_drift as d (resource, field_path, change, count, example)
      select ${resource}, t.field_path, t.change, t.count, t.example::jsonb
      from unnest(
        ${counts.map((one) => one.fieldPath)}::text[],
        ${counts.map((one) => one.change)}::text[],
        ${counts.map((one) => one.count)}::bigint[],
        ${examples}::text[]
      ) as t(field_path, change, count, example)
      on conflict (resource, field_path, change) do update set
        count = d.count + excluded.count,
        last_seen = greatest(d.last_seen, now()),
        -- the latest example: it follows MEMBER_PII as set now, not as it was at first sight
        example = excluded.example
      returning d.resource, d.field_path, d.change, d.count, d.first_seen, d.example, (xmax = 0) as inserted
    ),
    events as (
      insert into rewards.alerts (id, type, subject, payload, created_at, next_attempt_at)
      select gen_random_uuid(), 'schema.drift',
             ${resource}::text || ':' || u.field_path || ':' || u.change,
             jsonb_build_object(
               'resource', u.resource, 'field_path', u.field_path, 'change', u.change,
               'first_seen', to_char(u.first_seen at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'example', u.example),
             now(), now()
      from upserted u
      where u.inserted and ${input.raiseEvent}
      on conflict (type, subject) do nothing
      returning id, subject
    )
    select u.field_path, u.change, u.count::text as count, e.id as alert_id
    from upserted u
    left join events e on e.subject = ${resource}::text || ':' || u.field_path || ':' || u.change
    where u.inserted`.execute(db);
  return rows.map((row) => ({
    resource,
    fieldPath: row.field_path,
    change: row.change,
    count: Number(row.count),
    alertId: row.alert_id,
  }));
}

/** Fields recorded per change, for the `rewards_etl_schema_drift_fields` gauge (0 for none). */
export async function countSchemaDriftByChange(db: Executor): Promise<Record<DriftChange, number>> {
  const rows = await db
    .selectFrom('rewards.schema_drift')
    .select(['change', (eb) => eb.fn.countAll<string>().as('fields')])
    .groupBy('change')
    .execute();
  const counts: Record<DriftChange, number> = { added: 0, missing: 0, type_changed: 0 };
  for (const row of rows) counts[row.change] = Number(row.fields);
  return counts;
}

/** One row of `rewards.schema_drift`, as `status` shows it. */
export interface SchemaDriftRow {
  resource: string;
  fieldPath: string;
  change: DriftChange;
  firstSeen: string;
  lastSeen: string;
  count: number;
  example: unknown;
}

/** Every recorded drift, most recently seen first (at most `limit`). */
export async function listSchemaDrift(db: Executor, limit = 100): Promise<SchemaDriftRow[]> {
  const rows = await db
    .selectFrom('rewards.schema_drift')
    .selectAll()
    .orderBy('last_seen', 'desc')
    .orderBy('resource')
    .orderBy('field_path')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    resource: row.resource,
    fieldPath: row.field_path,
    change: row.change,
    firstSeen: row.first_seen.toISOString(),
    lastSeen: row.last_seen.toISOString(),
    count: Number(row.count),
    example: row.example,
  }));
}
