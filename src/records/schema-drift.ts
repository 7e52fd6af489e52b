/**
 * Schema drift (docs/schema-drift.md): what a record shows that its parser did not expect. Pure.
 *
 * - `added`: a field the parser does not know, at the top level or inside an object it reads
 *   (`location.foo`; src/records/known-shape.ts). The record keeps it (`extra` or `raw`).
 * - `missing`: a field the parser requires is absent (the record is rejected, never a silent null).
 * - `type_changed`: a field arrived with another JSON type than the parser reads (rejected too).
 *
 * Detection rides on work the parser does anyway: unknown keys are found in one pass over the
 * record's keys and those of the objects it reads (a Map lookup each), and missing or retyped fields are read from the
 * validation issues of records that failed. A valid record with only known fields costs a
 * `for…in` over its keys (and those of its known objects) and allocates nothing.
 */

export const DRIFT_CHANGES = ['added', 'missing', 'type_changed'] as const;
export type DriftChange = (typeof DRIFT_CHANGES)[number];

/** One record's drift of one field. */
export interface FieldDrift {
  /** `ended_at`, `location.id`, `tags[0].name` (formatted like rejection reasons). */
  fieldPath: string;
  change: DriftChange;
  /** The value received (`added`, `type_changed`); null for `missing`. */
  example: unknown;
}

/** Drift of one field summed over a page or a pass: what one upsert of `schema_drift` writes. */
export interface DriftCount extends FieldDrift {
  /** Records that showed it. */
  count: number;
}

/** The part of a validation issue drift needs (zod's `$ZodIssue` has it). */
export interface ValidationIssue {
  code: string;
  path: readonly PropertyKey[];
}

/**
 * `missing` and `type_changed` drift from the issues of a record that failed validation: any
 * issue at a path the payload lacks is a missing field; a wrong-type issue at a path it has is a
 * type change. Other issues (a malformed timestamp, a value out of range, an unknown enum value)
 * are bad values, not a new shape: they stay rejections only. One drift per path.
 */
export function driftFromIssues(
  issues: readonly ValidationIssue[],
  payload: unknown,
  formatPath: (path: readonly PropertyKey[]) => string,
): FieldDrift[] {
  const out: FieldDrift[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    if (issue.path.length === 0) continue;
    const at = valueAt(payload, issue.path);
    const missing = !at.found || at.value === undefined;
    if (!missing && issue.code !== 'invalid_type') continue;
    const fieldPath = formatPath(issue.path);
    if (seen.has(fieldPath)) continue;
    seen.add(fieldPath);
    out.push(
      missing
        ? { fieldPath, change: 'missing', example: null }
        : { fieldPath, change: 'type_changed', example: at.value },
    );
  }
  return out;
}

/** The value at `path` in a received record, and whether it is there at all. */
export function valueAt(payload: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let current: unknown = payload;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) {
      return { found: false, value: undefined };
    }
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value: current };
}

/**
 * Sums drift per (field, change), so a page with 500 records that gained a field writes one row,
 * not 500. The first example met is kept. Order: first met first.
 */
export class DriftTally {
  private readonly byKey = new Map<string, DriftCount>();

  add(drift: readonly FieldDrift[]): void {
    for (const one of drift) this.addCount({ ...one, count: 1 });
  }

  addCount(one: DriftCount): void {
    const key = `${one.change}\u0000${one.fieldPath}`;
    const held = this.byKey.get(key);
    if (held === undefined) this.byKey.set(key, { ...one });
    else held.count += one.count;
  }

  get size(): number {
    return this.byKey.size;
  }

  counts(): DriftCount[] {
    return [...this.byKey.values()].map((count) => ({ ...count }));
  }
}

/** The drift resources that hold members' data: their examples follow MEMBER_PII, `forget` clears them. */
export const MEMBER_DRIFT_RESOURCES = [
  'members',
  'member_statuses',
  'member_wallets',
  'member_tags',
  'member_check_ins',
  'memberships',
] as const;

/** One record's drift as counts of one (a single-record endpoint). */
export function driftCounts(drift: readonly FieldDrift[]): DriftCount[] {
  const tally = new DriftTally();
  tally.add(drift);
  return tally.counts();
}

/** `tally`'s counts merged over several pages (a pass). */
export function mergeDriftCounts(...lists: readonly (readonly DriftCount[])[]): DriftCount[] {
  const tally = new DriftTally();
  for (const list of lists) for (const one of list) tally.addCount(one);
  return tally.counts();
}

/** The alert subject of a drift: unique per (resource, field, change), the way `schema_drift` is. */
export function driftSubject(drift: { resource: string; fieldPath: string; change: DriftChange }): string {
  return `${drift.resource}:${drift.fieldPath}:${drift.change}`;
}

/** At most this much JSON of an example is kept: one value to recognise the field by, not a dump. */
export const MAX_DRIFT_EXAMPLE_BYTES = 1024;

/**
 * An example as stored: JSON text of at most MAX_DRIFT_EXAMPLE_BYTES (a longer one becomes a
 * marked preview string), `protect` applied first (member resources follow MEMBER_PII); null as is.
 */
export function exampleJson(example: unknown, protect: (text: string) => string | null = (t) => t): string {
  // No value (a missing field) stays null: a hash of "null" would read as a value received.
  if (example === null || example === undefined) return 'null';
  const text = JSON.stringify(example) ?? 'null';
  const kept = protect(text);
  if (kept === null) return 'null';
  if (kept !== text) return JSON.stringify(kept);
  if (Buffer.byteLength(text, 'utf8') <= MAX_DRIFT_EXAMPLE_BYTES) return text;
  return JSON.stringify(`${[...text].slice(0, 200).join('')}… (${Buffer.byteLength(text, 'utf8')} bytes)`);
}
