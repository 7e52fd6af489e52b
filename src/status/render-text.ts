import { formatCount, formatDuration, formatInstant, plural, relativeTime } from './format.js';
import { QUEUE_STATES, WINDOW_STATES, type StatusReport } from './status-report.js';
import { FRESHNESS_HEADINGS, freshnessRow, requestsLine } from './freshness-view.js';
import { BUDGET_HEADINGS, budgetLine, budgetRow } from './budget-view.js';
import { verdictLine } from './verdict.js';
import { driftChangeLabel, driftExampleText, driftSummary } from './schema-drift-view.js';
import { workerRow, workersNote } from './workers-view.js';
import { stripControlCharacters } from '../terminal-text.js';

// The terminal rendering of `status`: a verdict line first, then one compact section per concern.
// Fits the terminal's width (100 columns when not a terminal); long texts (errors) are cut at the
// right edge, the JSON has them whole.

const WIDTH = 100;
const SPARKS = '▁▂▃▄▅▆▇█';

type Cell = string | number;

/** Aligned columns: numbers right, text left; with `width`, lines are cut to fit it (the status view cuts once, at the terminal's width). */
export function renderTable(
  headers: string[],
  rows: Cell[][],
  options: { width?: number; details?: ReadonlyArray<string | null> } = {},
): string[] {
  const width = options.width ?? Number.POSITIVE_INFINITY;
  const numeric = headers.map(
    (_, col) => rows.length > 0 && rows.every((row) => typeof row[col] === 'number'),
  );
  const text = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatCount(cell) : cell)));
  const widths = headers.map((header, col) =>
    Math.max(header.length, ...text.map((row) => (row[col] ?? '').length)),
  );
  const line = (cells: string[]) => {
    const joined = cells
      .map((cell, col) => {
        const size = widths[col] ?? 0;
        if (col === cells.length - 1 && !numeric[col]) return cell;
        return numeric[col] ? cell.padStart(size) : cell.padEnd(size);
      })
      .join('  ')
      .trimEnd();
    return joined.length > width ? `${joined.slice(0, width - 1)}…` : joined;
  };
  // Long texts (errors) go on their own line under the row, where they have the full width.
  const body = text.flatMap((row, i) => {
    const detail = options.details?.[i];
    return detail ? ['  ' + line(row), `      ↳ ${detail}`] : ['  ' + line(row)];
  });
  return ['  ' + line(headers).trimEnd(), ...body].map((l) =>
    l.length > width ? `${l.slice(0, width - 1)}…` : l,
  );
}

/** 24 hourly values as block characters, scaled to the largest. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values
    .map((value) => (max === 0 || value === 0 ? ' ' : SPARKS[Math.min(7, Math.floor((value / max) * 7.999))]))
    .join('')
    .replace(/ /g, '·');
}

/** The verdict is never cut: it wraps after a comma, continuation lines indented under the first problem. */
export function wrapVerdict(line: string, width = WIDTH): string[] {
  const indent = ' '.repeat('ATTENTION: '.length);
  const lines: string[] = [];
  let current = '';
  for (const part of line.split(/(?<=,) /)) {
    const candidate = current === '' ? part : `${current} ${part}`;
    if (candidate.length > width && current !== '') {
      lines.push(current);
      current = indent + part;
    } else {
      current = candidate;
    }
  }
  return [...lines, current];
}

function heading(title: string, note = ''): string {
  return `\n${title}${note === '' ? '' : `  (${note})`}`;
}

/** Every string of the report with control characters removed: partner texts reach a terminal. */
function withoutControlCharacters<T>(value: T): T {
  const clean = (item: unknown): unknown => {
    if (typeof item === 'string') return stripControlCharacters(item);
    if (Array.isArray(item)) return item.map(clean);
    if (item !== null && typeof item === 'object') {
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, clean(inner)]));
    }
    return item;
  };
  return clean(value) as T;
}

export function renderStatusText(unsafeReport: StatusReport, options: { width?: number } = {}): string {
  const width = options.width ?? WIDTH;
  // Error texts, record ids and reasons come from the partner API and remote servers: an escape
  // sequence in them could rewrite the operator's terminal. Cleaned once, before any layout.
  const report = withoutControlCharacters(unsafeReport);
  const now = new Date(report.generatedAt);
  const out = [
    ...wrapVerdict(verdictLine(report.verdict), width),
    `rewards-etl status at ${formatInstant(report.generatedAt)}`,
    ...checkinFeedSection(report),
    ...streamsSection(report, now),
    ...throughputSection(report),
    ...freshnessSection(report),
    ...budgetSection(report),
    ...queuesSection(report),
    ...workersSection(report, now),
    ...failuresSection(report, now),
    ...intentsSection(report),
    ...alertsSection(report, now),
    ...rejectedSection(report, now),
    ...schemaDriftSection(report, now),
    ...retentionSection(report),
    ...oauthSection(report),
  ];
  const lines = out.join('\n').split('\n');
  return lines.map((line) => (line.length > width ? `${line.slice(0, width - 1)}…` : line)).join('\n') + '\n';
}

function checkinFeedSection({ checkins, windows }: StatusReport): string[] {
  return [
    heading('CHECK-IN FEED'),
    `  watermark  ${formatInstant(checkins.watermark)}` +
      (checkins.lagSeconds === null
        ? '  (no window complete yet)'
        : `  (${formatDuration(checkins.lagSeconds)} behind)`),
    `  frontier   ${formatInstant(checkins.frontier)}`,
    `  windows    ${WINDOW_STATES.map((state) => `${state} ${formatCount(windows.counts[state])}`).join('   ')}`,
  ];
}

function streamsSection(report: StatusReport, now: Date): string[] {
  return [
    heading('STREAMS'),
    ...renderTable(
      ['stream', 'every', 'last run', 'status', 'rows', 'requests', 'next run'],
      report.streams.map((s) => [
        s.stream,
        formatDuration(s.intervalSeconds),
        s.lastRun === null ? 'never' : relativeTime(s.lastRun.startedAt, now),
        s.lastRun === null ? '—' : s.lastRun.kind === 'window' ? 'window done' : s.lastRun.status,
        s.lastRun?.rows ?? 0,
        s.lastRun?.requests ?? 0,
        s.nextDueAt === null ? '—' : relativeTime(s.nextDueAt, now).replace(/ ago$/, ' overdue'),
      ]),
      { details: report.streams.map((s) => s.lastRun?.error ?? null) },
    ),
  ];
}

function throughputSection({ throughput }: StatusReport): string[] {
  const first = throughput.hours[0];
  return [
    heading('ROWS PER HOUR', `last 24 h from ${formatInstant(first ?? null)}, oldest left`),
    ...renderTable(
      ['stream', 'total', 'per hour'],
      throughput.series.map((s) => [s.stream, s.rows.reduce((a, b) => a + b, 0), sparkline(s.rows)]),
    ),
  ];
}

function freshnessSection({ freshness }: StatusReport): string[] {
  return [
    heading('FRESHNESS', 'ages since last read and since a read last found a change; docs/freshness.md'),
    `  requests  ${requestsLine(freshness)}`,
    ...(freshness.kinds.length === 0
      ? ['  no record read on an adaptive cadence yet']
      : renderTable([...FRESHNESS_HEADINGS], freshness.kinds.map(freshnessRow))),
  ];
}

function budgetSection({ budget }: StatusReport): string[] {
  if (!budget.available) return [heading('BUDGET'), `  skipped: ${budget.reason}`];
  return [
    heading(
      'BUDGET',
      'one budget across streams: shares are floors, unused budget goes to who has work; docs/rate-limit.md',
    ),
    `  ${budgetLine(budget)}`,
    ...renderTable([...BUDGET_HEADINGS], budget.streams.map(budgetRow)),
  ];
}

function queuesSection({ queues }: StatusReport): string[] {
  if (!queues.available) return [heading('QUEUES'), `  skipped: ${queues.reason}`];
  return [
    heading('QUEUES'),
    ...renderTable(
      ['queue', ...QUEUE_STATES],
      queues.queues.map((q) => [q.queue, ...QUEUE_STATES.map((state) => q.counts[state])]),
    ),
  ];
}

/** Worker processes as they report themselves (liveness watchdog); a stuck one is restarting. */
function workersSection({ workers }: StatusReport, now: Date): string[] {
  const out = [heading('WORKERS', workersNote(workers))];
  if (!workers.available) return out;
  if (workers.live.length === 0) return [...out, '  none has reported in the last 30 s'];
  const rows = workers.live.map((record) => workerRow(record, now));
  return [
    ...out,
    ...renderTable(
      ['worker', 'started', 'jobs started', 'last job', 'state'],
      rows.map((row) => [row.worker, row.started, row.jobsStarted, row.lastJob, row.state]),
    ),
  ];
}

/** Failed windows and failed passes: shown only when there are some. */
function failuresSection({ windows, failedPasses }: StatusReport, now: Date): string[] {
  const out: string[] = [];
  if (windows.failed.length > 0) {
    out.push(heading('FAILED WINDOWS', `${formatCount(windows.counts.failed)} in all, oldest first`));
    out.push(
      ...renderTable(
        ['window start', 'end', 'attempts', 'next attempt'],
        windows.failed.map((w) => [
          formatInstant(w.start),
          formatInstant(w.end),
          w.attempts,
          relativeTime(w.nextAttemptAt, now),
        ]),
        { details: windows.failed.map((w) => w.lastError) },
      ),
    );
  }
  if (failedPasses.length > 0) {
    out.push(heading('FAILED PASSES', 'last 24 h, newest first'));
    out.push(
      ...renderTable(
        ['stream', 'started', 'status', 'error'],
        failedPasses.map((p) => [p.stream, relativeTime(p.startedAt, now), p.status, p.error ?? '']),
      ),
    );
  }
  return out;
}

function intentsSection({ intents }: StatusReport): string[] {
  return [
    heading('PAYMENT INTENTS'),
    `  open ${formatCount(intents.open)}` +
      (intents.oldestOpenAt === null
        ? ''
        : `   oldest since ${formatInstant(intents.oldestOpenAt)} (${intents.oldestOpenId ?? ''})`),
  ];
}

function alertsSection({ alerts }: StatusReport, now: Date): string[] {
  const out = [
    heading('ALERTS'),
    `  undelivered ${formatCount(alerts.undelivered)}   retrying ${formatCount(alerts.retrying)}   failed ${formatCount(alerts.failed)}`,
  ];
  if (alerts.recentFailures.length === 0) return out;
  return [
    ...out,
    ...renderTable(
      ['intent', 'attempts', 'state', 'last error'],
      alerts.recentFailures.map((a) => [
        a.paymentIntentId?.slice(0, 8) ?? `${a.type} ${a.subject}`.slice(0, 60),
        a.attempts,
        a.failedAt === null
          ? `retry ${relativeTime(a.nextAttemptAt, now)}`
          : `gave up ${relativeTime(a.failedAt, now)}`,
        a.lastError,
      ]),
    ),
  ];
}

function retentionSection({ retention }: StatusReport): string[] {
  const kept = (seconds: number | null) => (seconds === null ? 'forever' : formatDuration(seconds));
  return [
    heading('RETENTION'),
    `  check-ins kept ${kept(retention.checkInsSeconds)}, check_ins_daily kept ${kept(retention.rollupSeconds)}`,
    ...retention.removed.map(
      (r) =>
        `  ${r.target}: ${plural(r.rows, 'row')} removed in ${plural(r.removals, 'pass', 'passes')}, up to ${formatInstant(r.through)}`,
    ),
  ];
}

function rejectedSection({ rejected }: StatusReport, now: Date): string[] {
  const out = [
    heading('REJECTED RECORDS'),
    `  ${plural(rejected.total, 'record')} in all, ${formatCount(rejected.last24h)} seen in the last 24 h` +
      (rejected.byStream.length === 0
        ? ''
        : `   ${rejected.byStream.map((r) => `${r.stream} ${formatCount(r.count)}`).join(', ')}`),
  ];
  if (rejected.recent.length === 0) return out;
  return [
    ...out,
    ...renderTable(
      ['stream', 'record', 'seen', 'times', 'reason'],
      rejected.recent.map((r) => [
        r.stream,
        r.recordId ?? '—',
        relativeTime(r.lastSeenAt, now),
        r.timesSeen,
        r.reason,
      ]),
    ),
  ];
}

function schemaDriftSection({ schemaDrift }: StatusReport, now: Date): string[] {
  if (schemaDrift.length === 0)
    return [heading('SCHEMA DRIFT'), '  none: every record had the fields its parser reads'];
  return [
    heading('SCHEMA DRIFT', 'docs/schema-drift.md'),
    `  ${plural(schemaDrift.length, 'field')}: ${driftSummary(schemaDrift)}`,
    ...renderTable(
      ['resource', 'field', 'change', 'first seen', 'last seen', 'records', 'example'],
      schemaDrift.map((d) => [
        d.resource,
        d.fieldPath,
        driftChangeLabel(d.change),
        relativeTime(d.firstSeen, now),
        relativeTime(d.lastSeen, now),
        d.count,
        driftExampleText(d.example),
      ]),
    ),
  ];
}

function oauthSection({ oauth }: StatusReport): string[] {
  if (!oauth.configured) return [heading('OAUTH'), '  not configured (SVC_OAUTH_CLIENT_ID unset)'];
  return [
    heading('OAUTH'),
    `  refresh token ${oauth.hasRefreshToken ? 'stored' : 'none'}   access token expires ${formatInstant(oauth.accessTokenExpiresAt)}`,
    `  last refresh ${formatInstant(oauth.lastRefreshedAt)}` +
      (oauth.needsReauthorization ? '   refresh token revoked: run `rewards-etl auth`' : ''),
    ...(oauth.lastError === null
      ? []
      : [`  last error ${formatInstant(oauth.lastErrorAt)}: ${oauth.lastError}`]),
    `  members connected ${oauth.members.active}   need re-authorization ${oauth.members.needsReauth}` +
      `   revoked ${oauth.members.revoked}` +
      (oauth.members.needsReauth > 0 ? '   (rewards-etl members list)' : ''),
  ];
}
