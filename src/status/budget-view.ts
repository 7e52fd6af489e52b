import { formatCount } from './format.js';
import type { BudgetSummary } from './status-report.js';

// The BUDGET part of `status` (terminal) and its cells, shared with the status page
// (docs/rate-limit.md, "One budget"); read by read-budget.ts.

export const BUDGET_HEADINGS = ['stream', 'share', 'floor/h', 'last hour', 'wants/h', 'allowance/h'] as const;

/** One row of the budget table (numbers as numbers, for right alignment). */
export function budgetRow(row: BudgetSummary['streams'][number]): Array<string | number> {
  return [
    row.stream,
    row.share === 0 ? '—' : `${Math.round(row.share * 100)} %`,
    row.floorPerHour,
    row.requestsLastHour,
    row.demandPerHour,
    row.allowancePerHour,
  ];
}

/** "36,000 requests/h; 1,234 spent in the last hour". */
export function budgetLine(budget: BudgetSummary): string {
  const spent = budget.streams.reduce((sum, row) => sum + row.requestsLastHour, 0);
  return `limit ${formatCount(budget.limitPerHour)} requests/h; ${formatCount(spent)} spent in the last hour (every process, every stream)`;
}
