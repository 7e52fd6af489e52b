import type { z } from 'zod';
import { addedDriftOf, knownShapeOf, unknownFieldsOf } from './known-shape.js';
import { driftFromIssues, DriftTally, type DriftCount, type FieldDrift, valueAt } from './schema-drift.js';
import { formatJsonPath, unstorableReason } from './storable.js';

/**
 * The result of normalizing one record. A rejection carries what `rejected_records` stores:
 * the id (when the payload has a readable one), a reason naming the field path and the problem,
 * and the payload as received.
 */
export interface Rejection {
  recordId: string | null;
  reason: string;
  payload: unknown;
  /** Fields missing or of another type than the parser reads (docs/schema-drift.md). */
  drift?: FieldDrift[];
}

export type ParseResult<T> =
  | {
      ok: true;
      record: T;
      /**
       * The record's fields the parser does not know, top-level or inside an object it reads, as
       * `unknownFieldsOf` shapes them; null when none (docs/schema-drift.md).
       */
      extra?: Record<string, unknown> | null;
      /** `added` drift for each field of `extra`, by path (`mood`, `location.foo`); absent when none. */
      drift?: FieldDrift[];
    }
  | { ok: false; rejection: Rejection };

/** The drift one parse result shows: its unknown fields, or what its rejection lacked. */
export function driftOf(result: ParseResult<unknown>): FieldDrift[] {
  return (result.ok ? result.drift : result.rejection.drift) ?? [];
}

/** Normalizes one raw record. Never throws, whatever the input. */
export type RecordParser<T> = (raw: unknown) => ParseResult<T>;

export interface ParsedRecords<T> {
  records: T[];
  rejections: Rejection[];
  /** Schema drift summed over the records: one entry per (field, change), usually none. */
  drift: DriftCount[];
}

/** Normalizes a page of records; one bad record becomes a rejection and never fails the page. */
export function parseRecords<T>(list: readonly unknown[], parseOne: RecordParser<T>): ParsedRecords<T> {
  const records: T[] = [];
  const rejections: Rejection[] = [];
  if (!Array.isArray(list)) {
    return {
      records,
      rejections: [{ recordId: null, reason: 'expected an array of records', payload: list }],
      drift: [],
    };
  }
  const drift = new DriftTally();
  for (const raw of list as readonly unknown[]) {
    const result = parseOne(raw);
    if (result.ok) {
      records.push(result.record);
      if (result.drift !== undefined) drift.add(result.drift);
    } else {
      rejections.push(result.rejection);
      if (result.rejection.drift !== undefined) drift.add(result.rejection.drift);
    }
  }
  return { records, rejections, drift: drift.size === 0 ? [] : drift.counts() };
}

/** The payload's `id` as a string, if it has one we can read (valid or not). */
export function readRecordId(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
  try {
    const id: unknown = (payload as Record<string, unknown>)['id'];
    if (typeof id === 'string') return id.length > 200 ? id.slice(0, 200) : id;
    if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  } catch {
    // A getter that throws is not JSON; there is simply no readable id.
  }
  return null;
}

export function reject(payload: unknown, reason: string): { ok: false; rejection: Rejection } {
  return { ok: false, rejection: { recordId: readRecordId(payload), reason, payload } };
}

/** How a reason shows what was received: the value itself, or only its type (personal data). */
export type ReasonValues = 'quoted' | 'type-only';

function describeValue(value: unknown, values: ReasonValues): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (values === 'type-only') return typeof value;
  switch (typeof value) {
    case 'string':
      return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    default:
      return typeof value;
  }
}

function formatIssue(issue: z.core.$ZodIssue, payload: unknown, values: ReasonValues): string {
  const where = formatJsonPath(issue.path);
  if (issue.code === 'invalid_type') {
    const { found, value } = valueAt(payload, issue.path);
    if (!found || value === undefined) return `${where}: required field missing`;
    return `${where}: expected ${issue.expected}, got ${describeValue(value, values)}`;
  }
  if (issue.code === 'invalid_value') {
    const expected = issue.values
      .map((v) => (typeof v === 'bigint' ? String(v) : JSON.stringify(v)))
      .join(' | ');
    return `${where}: expected ${expected}, got ${describeValue(valueAt(payload, issue.path).value, values)}`;
  }
  return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`;
}

const MAX_ISSUES_IN_REASON = 5;

/**
 * Turns zod issues into one reason line: `created_at: not an ISO 8601 timestamp …; price: …`.
 * `type-only` never quotes a received value (member records: a reason is shown by `status`).
 */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  payload: unknown,
  values: ReasonValues = 'quoted',
): string {
  const shown = issues.slice(0, MAX_ISSUES_IN_REASON).map((issue) => formatIssue(issue, payload, values));
  const more = issues.length - shown.length;
  const reason = shown.join('; ') + (more > 0 ? `; and ${more} more` : '');
  return reason === '' ? '(record): invalid' : reason;
}

/**
 * Builds a `RecordParser` from a wire schema and a mapping to the domain type. A record holding
 * what Postgres cannot store (U+0000, a lone surrogate, deep nesting) is rejected first. Anything thrown
 * inside (which would be a bug) is turned into a rejection, so callers can rely on "never throws".
 */
export function recordParser<S extends z.ZodType, T>(
  schema: S,
  toDomain: (parsed: z.output<S>, raw: unknown, extra: Record<string, unknown> | null) => T,
  options: {
    /** Top-level fields whose schema checks storability itself (`memoizedByContent`). */
    storabilityCheckedBySchema?: readonly string[];
    /**
     * Whether reasons may quote received values (default `quoted`). Member records say
     * `type-only`: their reasons reach `status` and the status page, and a value there may be
     * someone's phone number, whatever MEMBER_PII says.
     */
    reasonValues?: ReasonValues;
  } = {},
): RecordParser<T> {
  // The fields this parser reads, nested ones included (docs/schema-drift.md).
  const known = knownShapeOf(schema);
  return (raw) => {
    try {
      const unstorable = unstorableReason(raw, options.storabilityCheckedBySchema);
      if (unstorable !== null) return reject(raw, unstorable);
      const result = schema.safeParse(raw);
      if (!result.success) {
        const rejected = reject(
          raw,
          formatIssues(result.error.issues, raw, options.reasonValues ?? 'quoted'),
        );
        const drift = driftFromIssues(result.error.issues, raw, formatJsonPath);
        if (drift.length > 0) rejected.rejection.drift = drift;
        return rejected;
      }
      const extra = unknownFieldsOf(raw, known);
      const record = toDomain(result.data, raw, extra);
      return extra === null
        ? { ok: true, record, extra }
        : { ok: true, record, extra, drift: addedDriftOf(extra, known) };
    } catch (error) {
      return reject(
        raw,
        `(record): normalizer failed: ${error instanceof Error ? error.message : 'unknown error'}`,
      );
    }
  };
}
