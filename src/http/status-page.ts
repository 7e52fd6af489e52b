import { formatCount, formatDuration, formatInstant, plural, relativeTime } from '../status/format.js';
import type { StatusReport } from '../status/status-report.js';
import type { VerdictThresholds } from '../status/verdict.js';
import { NARROW_CHART, renderHourlyChart, streamColor, WIDE_CHART } from './hourly-chart.js';
import { html, trusted, type SafeHtml } from './html.js';
import { badge, tableWith, when, type Tone } from './status-page-cells.js';
import { budgetSection, freshnessSection } from './status-page-freshness.js';
import {
  alertsAndRejectsSection,
  failuresSection,
  queuesAndAuthSection,
  schemaDriftSection,
  workersSection,
} from './status-page-sections.js';
import { STATUS_PAGE_CSS } from './status-page-style.js';

// The status page: server-rendered from a StatusReport, no script, refreshed by the browser. The
// verdict comes first; every table stacks into cards on a narrow screen (status-page-cells.ts).

export const REFRESH_SECONDS = 15;

/** Time only when on the same UTC day as the report, else the full instant. */
function shortInstant(at: string, reference: string): string {
  return at.slice(0, 10) === reference.slice(0, 10) ? `${at.slice(11, 16)} UTC` : formatInstant(at);
}

function card(label: string, value: string, sub: string, tone: Tone): SafeHtml {
  return html`<div class="card ${tone}">
    <div class="label">${label}</div>
    <div class="value">${value}</div>
    <div class="sub">${sub}</div>
  </div>`;
}

const RUN_TONES: Record<string, Tone> = { succeeded: 'ok', partial: 'warn', failed: 'bad', running: 'none' };

function summaryCards(report: StatusReport, thresholds: VerdictThresholds): SafeHtml {
  const { checkins, windows, intents, alerts, rejected, queues } = report;
  const lag = checkins.lagSeconds;
  const queueTotals = queues.queues.reduce(
    (sum, q) => ({
      waiting: sum.waiting + q.counts.waiting + q.counts.delayed,
      active: sum.active + q.counts.active,
    }),
    { waiting: 0, active: 0 },
  );
  return html`<section class="cards" aria-label="Summary">
    ${card('Check-in lag', lag === null ? '—' : formatDuration(lag), checkins.watermark === null ? 'no window complete yet' : `every check-in before ${shortInstant(checkins.watermark, report.generatedAt)} is in`, lag === null ? 'none' : lag > thresholds.maxLagSeconds ? 'bad' : 'ok')}
    ${card('Failed windows', formatCount(windows.counts.failed), `${formatCount(windows.counts.pending)} pending · ${formatCount(windows.counts.running)} running · ${formatCount(windows.counts.complete)} complete`, windows.counts.failed > 0 ? 'bad' : 'ok')}
    ${card('Open intents', formatCount(intents.open), intents.oldestOpenAt === null ? 'none pending' : `oldest ${relativeTime(intents.oldestOpenAt, new Date(report.generatedAt))}`, 'none')}
    ${card('Alerts', formatCount(alerts.undelivered), `undelivered · ${formatCount(alerts.failed)} given up · ${formatCount(alerts.retrying)} retrying`, alerts.failed > 0 ? 'bad' : alerts.retrying > 0 ? 'warn' : 'ok')}
    ${card('Rejected records', formatCount(rejected.last24h), `last 24 h · ${formatCount(rejected.total)} in all`, rejected.last24h > 0 ? 'warn' : 'ok')}
    ${queues.available ? card('Queued jobs', formatCount(queueTotals.waiting), `waiting or delayed · ${formatCount(queueTotals.active)} active`, 'none') : card('Queued jobs', '?', 'Redis unreachable', 'warn')}
  </section>`;
}

const STREAMS_TABLE = tableWith(
  ['stream', 'last run', 'started', '#rows', '#requests', 'schedule', 'next run', '!error'],
  'wide',
);

function streamsTable(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const rows = report.streams.map((s) => {
    const run = s.lastRun;
    const overdue = s.nextDueAt !== null && new Date(s.nextDueAt) < now && run?.status !== 'running';
    const tone = run === null ? 'none' : (RUN_TONES[run.status] ?? 'none');
    return {
      tone,
      cells: [
        html`<span class="name"
          ><span class="swatch" style="background:${streamColor(s.stream)}"></span>
          <strong>${s.stream}</strong></span
        >`,
        run === null ? badge('never run', 'none') : badge(run.status, tone),
        run === null ? '—' : when(run.startedAt, now),
        run === null ? '—' : formatCount(run.rows),
        run === null ? '—' : formatCount(run.requests),
        `every ${formatDuration(s.intervalSeconds)}`,
        s.nextDueAt === null
          ? '—'
          : overdue
            ? html`<span class="overdue">due ${relativeTime(s.nextDueAt, now)}</span>`
            : relativeTime(s.nextDueAt, now),
        run?.error ?? '',
      ],
    };
  });
  return html`<section>
    <h2>Streams</h2>
    ${STREAMS_TABLE(rows)}
  </section>`;
}

function chartSection(report: StatusReport): SafeHtml {
  const legend = report.throughput.series.map(
    (s) =>
      html`<li>
        <span class="swatch" style="background:${streamColor(s.stream)}"></span>${s.stream}
        <strong>${formatCount(s.rows.reduce((a, b) => a + b, 0))}</strong>
      </li>`,
  );
  return html`<section>
    <h2>Rows ingested per hour<small>last ${report.throughput.hours.length} hours, UTC</small></h2>
    <ul class="legend">
      ${legend}
    </ul>
    ${renderHourlyChart(report.throughput, WIDE_CHART)} ${renderHourlyChart(report.throughput, NARROW_CHART)}
    <p class="note">
      Check-ins: new check-ins first written that hour. Other streams: rows of the passes started that hour.
    </p>
  </section>`;
}

/** The first thing on screen, at any width: OK, or ATTENTION with its problems. */
function verdictHeader(report: StatusReport): SafeHtml {
  const { verdict } = report;
  return html`<header class="${verdict.ok ? 'ok' : 'attention'}">
    <div class="wrap">
      <div class="brand">rewards-etl · pipeline status</div>
      <h1 id="verdict">
        ${verdict.ok ? 'OK — all streams healthy' : `ATTENTION — ${plural(verdict.problems.length, 'problem')}`}
      </h1>
      ${
        verdict.ok
          ? ''
          : html`<ul class="problems">
              ${verdict.problems.map((p) => html`<li>${p}</li>`)}
            </ul>`
      }
      <p class="meta">
        As of ${formatInstant(report.generatedAt)} · refreshes every ${REFRESH_SECONDS} s ·
        <a href="/status.json">status.json</a> · <a href="/metrics">metrics</a>
      </p>
    </div>
  </header>`;
}

export function renderStatusPage(report: StatusReport, thresholds: VerdictThresholds): string {
  const title = report.verdict.ok ? 'OK' : 'ATTENTION';
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta http-equiv="refresh" content="${REFRESH_SECONDS}" />
        <title>${title} · rewards-etl status</title>
        <style>
          ${trusted(STATUS_PAGE_CSS)}
        </style>
      </head>
      <body>
        ${verdictHeader(report)}
        <main class="wrap">
          ${summaryCards(report, thresholds)} ${streamsTable(report)} ${chartSection(report)}
          ${freshnessSection(report)} ${budgetSection(report)} ${failuresSection(report)}
          ${alertsAndRejectsSection(report)} ${queuesAndAuthSection(report)} ${workersSection(report)}
          ${schemaDriftSection(report)}
        </main>
      </body>
    </html> `;
  return page.value;
}
