import type { FreshnessPlan } from '../sync/freshness-plan.js';
import { formatCount, formatDuration } from './format.js';
import { renderTable } from './render-text.js';

// The terminal view of `rewards-etl plan` (docs/freshness.md).

const age = (seconds: number | null) => (seconds === null ? '—' : formatDuration(seconds));

export function renderPlanText(plan: FreshnessPlan, rateLimitRps: number): string {
  const used =
    plan.limitPerHour === 0 ? 0 : Math.round((plan.totalRequestsPerHour / plan.limitPerHour) * 100);
  return [
    `rewards-etl plan: what SVC_RATE_LIMIT_RPS=${rateLimitRps} buys (${formatCount(plan.limitPerHour)} requests/h)`,
    plan.problems.length === 0 ? 'OK' : `ATTENTION: ${plan.problems.join('; ')}`,
    '',
    `STREAMS  (projected requests/h: ${formatCount(plan.totalRequestsPerHour)}, ${used} % of the limit)`,
    ...renderTable(
      ['stream', 'requests/h', 'basis'],
      plan.streams.map((s) => [s.stream, s.requestsPerHour, s.basis]),
    ),
    '',
    'BUDGET  (one budget across streams: shares are floors, what the feed and intents leave goes to who has work)',
    ...renderTable(
      ['stream', 'share', 'floor/h', 'wants/h', 'allowance/h', 'last hour'],
      plan.budget.map((b) => [
        b.stream,
        b.share === 0 ? '—' : `${Math.round(b.share * 100)} %`,
        b.floorPerHour,
        b.demandPerHour,
        b.allowancePerHour,
        b.requestsLastHour ?? '—',
      ]),
    ),
    '',
    'RECORDS  (age since last read if every record is read once per interval)',
    ...renderTable(
      ['kind', 'records', 'read every', 'age p50', 'age p95', 'requests/h', 'set by'],
      plan.records.map((r) => [
        r.kind,
        r.records,
        age(r.readEverySeconds),
        age(r.readAgeP50Seconds),
        age(r.readAgeP95Seconds),
        r.requestsPerHour,
        r.setBy,
      ]),
    ),
    '',
  ].join('\n');
}
