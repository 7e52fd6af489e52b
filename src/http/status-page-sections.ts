import { driftChangeLabel, driftExampleText, driftSummary } from '../status/schema-drift-view.js';
import { formatCount, formatInstant, plural, relativeTime } from '../status/format.js';
import { QUEUE_STATES, type StatusReport } from '../status/status-report.js';
import { workerRow, workersNote } from '../status/workers-view.js';
import { html, type SafeHtml } from './html.js';
import { badge, listOrNone, tableWith, when } from './status-page-cells.js';

// The status page's lower sections: failures, alerts and rejected records, queues and OAuth,
// workers, schema drift. Each is one card; two side by side where the screen is wide enough.

const WINDOWS_TABLE = tableWith(['window', '#attempts', 'next attempt', '!last error']);
const PASSES_TABLE = tableWith(['stream', 'status', 'started', '!error']);

export function failuresSection(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const windows = report.windows.failed.map((w) => ({
    tone: 'bad' as const,
    cells: [
      html`<span class="when">${formatInstant(w.start)}<small>to ${formatInstant(w.end)}</small></span>`,
      w.attempts,
      relativeTime(w.nextAttemptAt, now),
      w.lastError ?? '',
    ],
  }));
  const passes = report.failedPasses.map((p) => ({
    tone: p.status === 'failed' ? ('bad' as const) : ('warn' as const),
    cells: [
      html`<strong>${p.stream}</strong>`,
      badge(p.status, p.status === 'failed' ? 'bad' : 'warn'),
      when(p.startedAt, now),
      p.error ?? '',
    ],
  }));
  return html`<section class="grid2">
    <div>
      <h2>Failed windows<small>${plural(report.windows.counts.failed, 'window')}, oldest first</small></h2>
      ${listOrNone(windows, 'No failed check-in windows.', () => WINDOWS_TABLE(windows))}
    </div>
    <div>
      <h2>Failed passes<small>last 24 hours</small></h2>
      ${listOrNone(passes, 'No failed or partial passes in the last 24 hours.', () => PASSES_TABLE(passes))}
    </div>
  </section>`;
}

const ALERTS_TABLE = tableWith(['intent', '#attempts', 'state', '!last error']);
const REJECTS_TABLE = tableWith(['stream', 'record', 'last seen', '#times', '!reason']);

export function alertsAndRejectsSection(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const { alerts, rejected, intents } = report;
  const failures = alerts.recentFailures.map((a) => ({
    tone: a.failedAt === null ? ('warn' as const) : ('bad' as const),
    cells: [
      html`<code title="alert ${a.id} (${a.type})">${a.paymentIntentId?.slice(0, 8) ?? a.subject}</code>`,
      a.attempts,
      a.failedAt === null
        ? badge(`retry ${relativeTime(a.nextAttemptAt, now)}`, 'warn')
        : badge('gave up', 'bad'),
      a.lastError,
    ],
  }));
  const rejects = rejected.recent.map((r) => [
    html`<strong>${r.stream}</strong>`,
    html`<code>${r.recordId ?? '—'}</code>`,
    when(r.lastSeenAt, now),
    r.timesSeen,
    r.reason,
  ]);
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
      ${listOrNone(failures, 'No delivery failures.', () => ALERTS_TABLE(failures))}
    </div>
    <div>
      <h2>
        Rejected records<small
          >${plural(rejected.total, 'record')}${byStream === '' ? '' : ` · ${byStream}`}</small
        >
      </h2>
      ${listOrNone(rejects, 'No record has failed validation.', () => REJECTS_TABLE(rejects))}
    </div>
  </section>`;
}

const DRIFT_TABLE = tableWith(
  ['resource', 'field', 'change', 'first seen', 'last seen', '#records', 'example'],
  'wide',
);

export function schemaDriftSection(report: StatusReport): SafeHtml {
  const now = new Date(report.generatedAt);
  const rows = report.schemaDrift.map((d) => [
    html`<strong>${d.resource}</strong>`,
    html`<code>${d.fieldPath}</code>`,
    badge(driftChangeLabel(d.change), d.change === 'added' ? 'warn' : 'bad'),
    when(d.firstSeen, now),
    when(d.lastSeen, now),
    formatCount(d.count),
    html`<code>${driftExampleText(d.example)}</code>`,
  ]);
  return html`<section>
    <h2>
      Schema drift<small
        >${report.schemaDrift.length === 0 ? 'none' : driftSummary(report.schemaDrift)}</small
      >
    </h2>
    ${listOrNone(rows, 'Every record had the fields its parser reads.', () => DRIFT_TABLE(rows))}
  </section>`;
}

const QUEUES_TABLE = tableWith(['queue', ...QUEUE_STATES.map((state) => `#${state}`)]);

function queueTable(queues: StatusReport['queues']): SafeHtml {
  if (!queues.available) return html`<p class="none-yet">Skipped: ${queues.reason}</p>`;
  return QUEUES_TABLE(
    queues.queues.map((q) => [
      html`<code>${q.queue}</code>`,
      ...QUEUE_STATES.map((s) => formatCount(q.counts[s])),
    ]),
  );
}

/** Two columns (what, its state) at every width: no headings to stack. */
function oauthTable(oauth: StatusReport['oauth']): SafeHtml {
  if (!oauth.configured) return html`<p class="none-yet">Not configured (SVC_OAUTH_CLIENT_ID unset).</p>`;
  const members = html`${formatCount(oauth.members.active)}
  ${oauth.members.needsReauth > 0 ? badge(`${oauth.members.needsReauth} need re-authorization`, 'warn') : ''}
  ${oauth.members.revoked > 0 ? ` · ${oauth.members.revoked} revoked` : ''}`;
  const lastError =
    oauth.lastError === null
      ? '—'
      : `${formatInstant(oauth.lastErrorAt)}: ${oauth.lastError}${oauth.needsReauthorization ? ' — run rewards-etl auth' : ''}`;
  return html`<table class="pairs">
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
        <td class="${oauth.lastError === null ? '' : 'err'}">${lastError}</td>
      </tr>
      <tr>
        <td>members connected</td>
        <td>${members}</td>
      </tr>
    </tbody>
  </table>`;
}

export function queuesAndAuthSection(report: StatusReport): SafeHtml {
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

const WORKERS_TABLE = tableWith(['worker', 'started', '#jobs started', 'last job', 'state']);

export function workersSection(report: StatusReport): SafeHtml {
  const { workers } = report;
  const now = new Date(report.generatedAt);
  const rows = workers.live.map((record) => {
    const row = workerRow(record, now);
    return {
      tone: row.stuck ? ('bad' as const) : ('none' as const),
      cells: [
        html`<code>${row.worker}</code>`,
        row.started,
        formatCount(row.jobsStarted),
        row.lastJob,
        row.stuck ? badge(row.state, 'bad') : row.state,
      ],
    };
  });
  return html`<section>
    <h2>Workers <small>${workersNote(workers)}</small></h2>
    ${
      workers.available
        ? listOrNone(rows, 'No worker has reported in the last 30 s.', () => WORKERS_TABLE(rows))
        : ''
    }
  </section>`;
}
