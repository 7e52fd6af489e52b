import { formatCount, formatDuration, formatInstant, plural, relativeTime } from '../status/format.js';
import { QUEUE_STATES, type StatusReport } from '../status/status-report.js';
import type { VerdictThresholds } from '../status/verdict.js';
import { renderHourlyChart, streamColor } from './hourly-chart.js';
import { html, trusted, type SafeHtml } from './html.js';
import { STATUS_PAGE_CSS } from './status-page-style.js';
import { workerRow, workersNote } from '../status/workers-view.js';
import { driftChangeLabel, driftExampleText, driftSummary } from '../status/schema-drift-view.js';
import { budgetSection, freshnessSection } from './status-page-freshness.js';

// The status page: server-rendered from a StatusReport, no script, refreshed by the browser.

export const REFRESH_SECONDS = 15;

type Tone = 'ok' | 'warn' | 'bad' | 'none';

function when(at: string | null, now: Date): SafeHtml {
  if (at === null) return html`<span class="when">—</span>`;
  return html`<span class="when">${relativeTime(at, now)}<small>${formatInstant(at)}</small></span>`;
}

/** Time only when on the same UTC day as the report, else the full instant. */
function shortInstant(at: string, reference: string): string {
  return at.slice(0, 10) === reference.slice(0, 10) ? `${at.slice(11, 16)} UTC` : formatInstant(at);
}

function badge(text: string, tone: Tone): SafeHtml {
  return html`<span class="badge ${tone}">${text}</span>`;
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

function streamsTable(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const rows = report.streams.map((s) => {
    const run = s.lastRun;
    const overdue = s.nextDueAt !== null && new Date(s.nextDueAt) < now && run?.status !== 'running';
    return html`<tr>
      <td>
        <span class="swatch" style="background:${streamColor(s.stream)}"></span> <strong>${s.stream}</strong>
      </td>
      <td>
        ${run === null ? badge('never run', 'none') : badge(run.status, RUN_TONES[run.status] ?? 'none')}
      </td>
      <td>${run === null ? '—' : when(run.startedAt, now)}</td>
      <td class="num">${run === null ? '—' : formatCount(run.rows)}</td>
      <td class="num">${run === null ? '—' : formatCount(run.requests)}</td>
      <td>every ${formatDuration(s.intervalSeconds)}</td>
      <td>
        ${s.nextDueAt === null ? '—' : overdue ? html`<span class="overdue">due ${relativeTime(s.nextDueAt, now)}</span>` : relativeTime(s.nextDueAt, now)}
      </td>
      <td class="err">${run?.error ?? ''}</td>
    </tr>`;
  });
  return html`<section>
    <h2>Streams</h2>
    <table>
      <thead>
        <tr>
          <th>stream</th>
          <th>last run</th>
          <th>started</th>
          <th class="num">rows</th>
          <th class="num">requests</th>
          <th>schedule</th>
          <th>next run</th>
          <th>error</th>
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
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
    ${renderHourlyChart(report.throughput)}
    <p class="note">
      Check-ins: new check-ins first written that hour. Other streams: rows of the passes started that hour.
    </p>
  </section>`;
}

/** A table with these column headings around the rows; a heading written `#name` is numeric. */
function tableWith(...headings: string[]): (rows: SafeHtml[]) => SafeHtml {
  const cells = headings.map((heading) =>
    heading.startsWith('#') ? html`<th class="num">${heading.slice(1)}</th>` : html`<th>${heading}</th>`,
  );
  return (rows) =>
    html`<table>
      <thead>
        <tr>
          ${cells}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>`;
}

function listOrNone(items: SafeHtml[], none: string, table: (rows: SafeHtml[]) => SafeHtml): SafeHtml {
  return items.length === 0 ? html`<p class="none-yet">${none}</p>` : table(items);
}

function failuresSection(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const windows = report.windows.failed.map(
    (w) =>
      html`<tr>
        <td class="when">${formatInstant(w.start)}<small>to ${formatInstant(w.end)}</small></td>
        <td class="num">${w.attempts}</td>
        <td>${relativeTime(w.nextAttemptAt, now)}</td>
        <td class="err">${w.lastError ?? ''}</td>
      </tr>`,
  );
  const passes = report.failedPasses.map(
    (p) =>
      html`<tr>
        <td><strong>${p.stream}</strong></td>
        <td>${badge(p.status, p.status === 'failed' ? 'bad' : 'warn')}</td>
        <td>${when(p.startedAt, now)}</td>
        <td class="err">${p.error ?? ''}</td>
      </tr>`,
  );
  return html`<section class="grid2">
    <div>
      <h2>Failed windows<small>${plural(report.windows.counts.failed, 'window')}, oldest first</small></h2>
      ${listOrNone(
        windows,
        'No failed check-in windows.',
        tableWith('window', '#attempts', 'next attempt', 'last error'),
      )}
    </div>
    <div>
      <h2>Failed passes<small>last 24 hours</small></h2>
      ${listOrNone(
        passes,
        'No failed or partial passes in the last 24 hours.',
        tableWith('stream', 'status', 'started', 'error'),
      )}
    </div>
  </section>`;
}

function alertsAndRejectsSection(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const { alerts, rejected, intents } = report;
  const failures = alerts.recentFailures.map(
    (a) =>
      html`<tr>
        <td title="alert ${a.id} (${a.type})"><code>${a.paymentIntentId?.slice(0, 8) ?? a.subject}</code></td>
        <td class="num">${a.attempts}</td>
        <td>
          ${a.failedAt === null ? badge(`retry ${relativeTime(a.nextAttemptAt, now)}`, 'warn') : badge('gave up', 'bad')}
        </td>
        <td class="err">${a.lastError}</td>
      </tr>`,
  );
  const rejects = rejected.recent.map(
    (r) =>
      html`<tr>
        <td><strong>${r.stream}</strong></td>
        <td><code>${r.recordId ?? '—'}</code></td>
        <td>${when(r.lastSeenAt, now)}</td>
        <td class="num">${r.timesSeen}</td>
        <td class="err">${r.reason}</td>
      </tr>`,
  );
  const byStream = rejected.byStream.map((r) => `${r.stream} ${formatCount(r.count)}`).join(' · ');
  return html`<section class="grid2">
    <div>
      <h2>
        Alerts<small
          >${formatCount(alerts.undelivered)} undelivered · ${formatCount(alerts.retrying)} retrying ·
          ${formatCount(alerts.failed)} failed</small
        >
      </h2>
      <p class="note">
        Open payment intents:
        <strong>${formatCount(intents.open)}</strong
        >${intents.oldestOpenAt === null ? '' : html`, oldest since ${formatInstant(intents.oldestOpenAt)} (<code>${intents.oldestOpenId ?? ''}</code>)`}
      </p>
      ${listOrNone(
        failures,
        'No delivery failures.',
        tableWith('intent', '#attempts', 'state', 'last error'),
      )}
    </div>
    <div>
      <h2>
        Rejected records<small
          >${plural(rejected.total, 'record')}${byStream === '' ? '' : ` · ${byStream}`}</small
        >
      </h2>
      ${listOrNone(
        rejects,
        'No record has failed validation.',
        tableWith('stream', 'record', 'last seen', '#times', 'reason'),
      )}
    </div>
  </section>`;
}

function schemaDriftSection(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const rows = report.schemaDrift.map(
    (d) =>
      html`<tr>
        <td><strong>${d.resource}</strong></td>
        <td><code>${d.fieldPath}</code></td>
        <td>${badge(driftChangeLabel(d.change), d.change === 'added' ? 'warn' : 'bad')}</td>
        <td>${when(d.firstSeen, now)}</td>
        <td>${when(d.lastSeen, now)}</td>
        <td class="num">${formatCount(d.count)}</td>
        <td><code>${driftExampleText(d.example)}</code></td>
      </tr>`,
  );
  return html`<section>
    <h2>
      Schema drift<small
        >${report.schemaDrift.length === 0 ? 'none' : driftSummary(report.schemaDrift)}</small
      >
    </h2>
    ${listOrNone(
      rows,
      'Every record had the fields its parser reads.',
      tableWith('resource', 'field', 'change', 'first seen', 'last seen', '#records', 'example'),
    )}
  </section>`;
}

function queueTable(queues: StatusReport['queues']): SafeHtml {
  return queues.available
    ? html`<table>
        <thead>
          <tr>
            <th>queue</th>
            ${QUEUE_STATES.map((s) => html`<th class="num">${s}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${queues.queues.map(
            (q) =>
              html`<tr>
                <td><code>${q.queue}</code></td>
                ${QUEUE_STATES.map((s) => html`<td class="num">${formatCount(q.counts[s])}</td>`)}
              </tr>`,
          )}
        </tbody>
      </table>`
    : html`<p class="none-yet">Skipped: ${queues.reason}</p>`;
}

function oauthTable(oauth: StatusReport['oauth']): SafeHtml {
  return !oauth.configured
    ? html`<p class="none-yet">Not configured (SVC_OAUTH_CLIENT_ID unset).</p>`
    : html`<table>
        <tbody>
          <tr>
            <td>refresh token</td>
            <td>${oauth.hasRefreshToken ? badge('stored', 'ok') : badge('none', 'warn')}</td>
          </tr>
          <tr>
            <td>access token expires</td>
            <td>${formatInstant(oauth.accessTokenExpiresAt)}</td>
          </tr>
          <tr>
            <td>last refresh</td>
            <td>${formatInstant(oauth.lastRefreshedAt)}</td>
          </tr>
          <tr>
            <td>last error</td>
            <td class="err">
              ${oauth.lastError === null ? '—' : `${formatInstant(oauth.lastErrorAt)}: ${oauth.lastError}`}${oauth.needsReauthorization ? ' — run rewards-etl auth' : ''}
            </td>
          </tr>
          <tr>
            <td>members connected</td>
            <td>
              ${formatCount(oauth.members.active)}
              ${
                oauth.members.needsReauth > 0
                  ? badge(`${oauth.members.needsReauth} need re-authorization`, 'warn')
                  : ''
              }
              ${oauth.members.revoked > 0 ? ` · ${oauth.members.revoked} revoked` : ''}
            </td>
          </tr>
        </tbody>
      </table>`;
}

function queuesAndAuthSection(report: StatusReport): SafeHtml {
  return html`<section class="grid2">
    <div>
      <h2>Queues</h2>
      ${queueTable(report.queues)}
    </div>
    <div>
      <h2>OAuth</h2>
      ${oauthTable(report.oauth)}
    </div>
  </section>`;
}

function workersSection(report: StatusReport): SafeHtml {
  const { workers } = report;
  const now = new Date(report.generatedAt);
  const rows = workers.live.map((record) => workerRow(record, now));
  const table = tableWith('worker', 'started', '#jobs started', 'last job', 'state');
  return html`<section>
    <h2>Workers <small>${workersNote(workers)}</small></h2>
    ${
      workers.available
        ? listOrNone(
            rows.map(
              (row) =>
                html`<tr>
                  <td><code>${row.worker}</code></td>
                  <td>${row.started}</td>
                  <td class="num">${formatCount(row.jobsStarted)}</td>
                  <td>${row.lastJob}</td>
                  <td>${row.stuck ? badge(row.state, 'bad') : row.state}</td>
                </tr>`,
            ),
            'No worker has reported in the last 30 s.',
            table,
          )
        : ''
    }
  </section>`;
}

export function renderStatusPage(report: StatusReport, thresholds: VerdictThresholds): string {
  const { verdict } = report;
  const title = verdict.ok ? 'OK' : 'ATTENTION';
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
        <header class="${verdict.ok ? 'ok' : 'attention'}">
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
        </header>
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
