import { BUDGET_HEADINGS, budgetLine, budgetRow } from '../status/budget-view.js';
import { FRESHNESS_HEADINGS, freshnessRow, requestsLine } from '../status/freshness-view.js';
import type { StatusReport } from '../status/status-report.js';
import { html, type SafeHtml } from './html.js';
import { tableWith } from './status-page-cells.js';

// The status page's Freshness and Budget sections (docs/freshness.md, docs/rate-limit.md): the same
// figures as `status`.

/** The column of records past their ceiling, shown as overdue when not zero. */
const PAST_CEILING_COLUMN = FRESHNESS_HEADINGS.indexOf('overdue');

const FRESHNESS_TABLE = tableWith(
  FRESHNESS_HEADINGS.map((heading, i) => (i === 1 || i === PAST_CEILING_COLUMN ? `#${heading}` : heading)),
  'wide',
);

const BUDGET_TABLE = tableWith(BUDGET_HEADINGS.map((heading, i) => (i === 0 ? heading : `#${heading}`)));

const numberCell = (cell: string | number) =>
  typeof cell === 'number' ? cell.toLocaleString('en-US') : cell;

export function freshnessSection(report: StatusReport): SafeHtml {
  const { freshness } = report;
  const rows = freshness.kinds.map((kind) =>
    freshnessRow(kind).map((cell, i) =>
      i === PAST_CEILING_COLUMN && typeof cell === 'number' && cell > 0
        ? { value: numberCell(cell), className: 'overdue' }
        : numberCell(cell),
    ),
  );
  return html`<section>
    <h2>Freshness<small>what the rate limit buys</small></h2>
    <p class="note">Requests in the last hour: ${requestsLine(freshness)}</p>
    ${
      freshness.kinds.length === 0
        ? html`<p class="note">No record read on an adaptive cadence yet.</p>`
        : FRESHNESS_TABLE(rows)
    }
    <p class="note">
      Ages since each record was last read, and since a read last found it changed (p50 and p95 over the
      records of a kind); unchanged: the share of reads that found nothing new.
    </p>
  </section>`;
}

/** The one budget across streams (docs/rate-limit.md): the same figures as `status`'s BUDGET. */
export function budgetSection(report: StatusReport): SafeHtml {
  const { budget } = report;
  if (!budget.available)
    return html`<section>
      <h2>Budget<small>one budget across streams</small></h2>
      <p class="note">Not available: ${budget.reason}</p>
    </section>`;
  const rows = budget.streams.map((row) => budgetRow(row).map(numberCell));
  return html`<section>
    <h2>Budget<small>one budget across streams</small></h2>
    <p class="note">${budgetLine(budget)}</p>
    ${BUDGET_TABLE(rows)}
    <p class="note">
      Share: the floor a stream keeps while it has work, whoever else is busy; what the feed and the intents
      (served first) leave goes to the streams with work. Allowance: for the next hour, if each stream wants
      again what it spent in the last one (members: their records due now).
    </p>
  </section>`;
}
