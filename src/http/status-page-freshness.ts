import { FRESHNESS_HEADINGS, freshnessRow, requestsLine } from '../status/freshness-view.js';
import type { StatusReport } from '../status/status-report.js';
import { html, type SafeHtml } from './html.js';

// The status page's Freshness section (docs/freshness.md): the same figures as `status`.

/** The column of records past their ceiling, shown as overdue when not zero. */
const PAST_CEILING_COLUMN = FRESHNESS_HEADINGS.indexOf('overdue');

export function freshnessSection(report: StatusReport): SafeHtml {
  const { freshness } = report;
  const rows = freshness.kinds.map((kind) => {
    const cells = freshnessRow(kind).map((cell, i) =>
      typeof cell === 'number'
        ? html`<td class="num${i === PAST_CEILING_COLUMN && cell > 0 ? ' overdue' : ''}">
            ${cell.toLocaleString('en-US')}
          </td>`
        : html`<td>${cell}</td>`,
    );
    return html`<tr>
      ${cells}
    </tr>`;
  });
  const headings = FRESHNESS_HEADINGS.map((heading, i) =>
    i === 1 || i === PAST_CEILING_COLUMN ? html`<th class="num">${heading}</th>` : html`<th>${heading}</th>`,
  );
  return html`<section>
    <h2>Freshness<small>what the rate limit buys</small></h2>
    <p class="note">Requests in the last hour: ${requestsLine(freshness)}</p>
    ${
      freshness.kinds.length === 0
        ? html`<p class="note">No record read on an adaptive cadence yet.</p>`
        : html`<table>
            <thead>
              <tr>
                ${headings}
              </tr>
            </thead>
            <tbody>
              ${rows}
            </tbody>
          </table>`
    }
    <p class="note">
      Ages since each record was last read, and since a read last found it changed (p50 and p95 over the
      records of a kind); unchanged: the share of reads that found nothing new.
    </p>
  </section>`;
}
