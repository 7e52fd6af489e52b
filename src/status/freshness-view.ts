import { formatCount, formatDuration } from './format.js';
import type { FreshnessSummary } from './status-report.js';
import type { RecordKindFreshness } from '../warehouse/record-reads.js';

// The FRESHNESS part of `status` (terminal) and its cells, shared with the status page: what the
// rate limit buys, per stream (requests in the last hour) and per kind of record (ages).

/** "chg": since a read last found the record changed; "overdue": records unread past their ceiling. */
export const FRESHNESS_HEADINGS = [
  'kind',
  'records',
  'read p50',
  'read p95',
  'chg p50',
  'chg p95',
  'unchanged',
  'ceiling',
  'overdue',
] as const;

function age(seconds: number | null): string {
  return seconds === null ? '—' : formatDuration(seconds);
}

/** One row of the kinds table, as text cells (numbers as numbers, for right alignment). */
export function freshnessRow(kind: RecordKindFreshness): Array<string | number> {
  return [
    kind.kind,
    kind.records,
    age(kind.sinceReadP50Seconds),
    age(kind.sinceReadP95Seconds),
    age(kind.sinceChangedP50Seconds),
    age(kind.sinceChangedP95Seconds),
    kind.unchangedShare === null ? '—' : `${Math.round(kind.unchangedShare * 100)} %`,
    age(kind.ceilingSeconds),
    kind.pastCeiling,
  ];
}

/** "members 1,204/h · checkins 3,100/h …": streams that made requests in the last hour. */
export function requestsLine(freshness: FreshnessSummary): string {
  const busy = freshness.requestsLastHour.filter((s) => s.requests > 0);
  if (busy.length === 0) return 'no requests in the last hour';
  const total = busy.reduce((sum, s) => sum + s.requests, 0);
  return `${formatCount(total)}/h: ${busy.map((s) => `${s.stream} ${formatCount(s.requests)}`).join(' · ')}`;
}
