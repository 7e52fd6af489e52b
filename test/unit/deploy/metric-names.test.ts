import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/metrics.js';
import { QUEUE_STATES, WINDOW_STATES } from '../../../src/status/status-report.js';
import { STREAM_NAMES } from '../../../src/sync/stream-facts.js';

// Every metric the Grafana dashboard and the Prometheus rules under deploy/ query must be one the
// worker exports, with labels it sets. The names come from the worker's real registry (the one
// /metrics serves), not from a copied list.

const ROOT = new URL('../../../', import.meta.url).pathname;
const DASHBOARD = 'deploy/grafana/rewards-etl-dashboard.json';
const RULES = 'deploy/prometheus/rewards-etl-alerts.yml';

/** Labels Prometheus adds to every scraped series, and the bucket label of histograms. */
const TARGET_LABELS = ['job', 'instance'];

interface Exported {
  labels: Set<string>;
}

async function exportedSeries(): Promise<Map<string, Exported>> {
  const { registry } = createMetrics();
  const series = new Map<string, Exported>();
  for (const metric of await registry.getMetricsAsJSON()) {
    const declared = registry.getSingleMetric(metric.name) as unknown as { labelNames?: readonly string[] };
    const labels = new Set([...(declared.labelNames ?? []), ...TARGET_LABELS]);
    if (String(metric.type) === 'histogram') {
      series.set(`${metric.name}_bucket`, { labels: new Set([...labels, 'le']) });
      series.set(`${metric.name}_sum`, { labels });
      series.set(`${metric.name}_count`, { labels });
    } else series.set(metric.name, { labels });
  }
  return series;
}

/** Allowed values of the labels whose values are a closed set known to the code. */
const KNOWN_VALUES: Record<string, Record<string, readonly string[]>> = {
  rewards_etl_windows: { state: WINDOW_STATES },
  rewards_etl_queue_jobs: { state: QUEUE_STATES },
};

/** What is wrong with one PromQL expression, as readable sentences (empty when it is fine). */
function problemsOf(expr: string, exported: Map<string, Exported>): string[] {
  const problems: string[] = [];
  const names = [...expr.matchAll(/\brewards_etl_\w+/g)].map((match) => match[0]);
  for (const name of names) if (!exported.has(name)) problems.push(`${name} is not exported`);
  const known = names.flatMap((name) => [...(exported.get(name)?.labels ?? [])]);
  for (const [, name = '', matchers = ''] of expr.matchAll(/(rewards_etl_\w+)\s*\{([^}]*)\}/g)) {
    for (const [, label = '', op = '', value = ''] of matchers.matchAll(
      /(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g,
    )) {
      if (exported.has(name) && !exported.get(name)?.labels.has(label))
        problems.push(`${name} has no label ${label}`);
      const allowed = label === 'stream' ? STREAM_NAMES : KNOWN_VALUES[name]?.[label];
      if (allowed !== undefined && (op === '=' || op === '!=') && !allowed.includes(value))
        problems.push(`${name}{${label}} is never "${value}"`);
    }
  }
  for (const [, list = ''] of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
    for (const label of list.split(',').map((text) => text.trim())) {
      if (label !== '' && !known.includes(label))
        problems.push(`no metric in the expression has label ${label}`);
    }
  }
  if (names.length === 0) problems.push('uses no rewards_etl_ metric');
  return problems;
}

/** Every `expr` in the dashboard's panels, and the templating queries. */
function dashboardExpressions(): string[] {
  const found: string[] = [];
  const walk = (value: unknown, key: string): void => {
    if (typeof value === 'string' && (key === 'expr' || key === 'definition')) found.push(value);
    else if (Array.isArray(value)) value.forEach((item) => walk(item, key));
    else if (value !== null && typeof value === 'object')
      for (const [inner, item] of Object.entries(value)) walk(item, inner);
  };
  walk(JSON.parse(readFileSync(`${ROOT}${DASHBOARD}`, 'utf8')), '');
  return found;
}

/** The rules file keeps each expression on one `expr:` line (its header says so). */
function ruleExpressions(): { alerts: string[]; exprs: string[] } {
  const text = readFileSync(`${ROOT}${RULES}`, 'utf8');
  const alerts = [...text.matchAll(/^\s*- alert:\s*(\S+)\s*$/gm)].map((match) => match[1] ?? '');
  const exprs = [...text.matchAll(/^\s*expr:\s*(.+)$/gm)].map((match) =>
    (match[1] ?? '').trim().replace(/^'(.*)'$/, '$1'),
  );
  return { alerts, exprs };
}

describe('deploy/: the dashboard and the alert rules query only what the worker exports', () => {
  it('the checker flags a name, a label or a label value the worker does not export', async () => {
    const exported = await exportedSeries();
    expect(problemsOf('rate(rewards_etl_rows_total[5m])', exported)).toEqual([
      'rewards_etl_rows_total is not exported',
    ]);
    expect(problemsOf('max(rewards_etl_windows{status="failed"})', exported)).toEqual([
      'rewards_etl_windows has no label status',
    ]);
    expect(problemsOf('max(rewards_etl_windows{state="broken"})', exported)).toEqual([
      'rewards_etl_windows{state} is never "broken"',
    ]);
    expect(problemsOf('sum by (queue) (rewards_etl_passes_total)', exported)).toEqual([
      'no metric in the expression has label queue',
    ]);
    expect(
      problemsOf(
        'histogram_quantile(0.9, sum by (le) (rate(rewards_etl_api_request_seconds_bucket[5m])))',
        exported,
      ),
    ).toEqual([]);
  });

  it(`every expression of ${DASHBOARD}`, async () => {
    const exported = await exportedSeries();
    const exprs = dashboardExpressions();
    expect(exprs.length).toBeGreaterThan(15);
    const problems = exprs.flatMap((expr) =>
      problemsOf(expr, exported).map((problem) => `${expr}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it(`every rule of ${RULES}`, async () => {
    const exported = await exportedSeries();
    const { alerts, exprs } = ruleExpressions();
    expect(alerts.length).toBeGreaterThan(5);
    expect(exprs).toHaveLength(alerts.length);
    const problems = exprs.flatMap((expr) =>
      problemsOf(expr, exported).map((problem) => `${expr}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it('the dashboard shows what an operator watches, and the rules cover what the status page calls a problem', () => {
    const dashboard = dashboardExpressions().join('\n');
    for (const name of [
      'rewards_etl_watermark_lag_seconds',
      'rewards_etl_rows_ingested_total',
      'rewards_etl_api_requests_total',
      'rewards_etl_api_rate_limited_total',
      'rewards_etl_windows',
      'rewards_etl_open_payment_intents',
      'rewards_etl_alert_deliveries_total',
      'rewards_etl_alerts_undelivered',
      'rewards_etl_alerts_failed',
    ])
      expect(dashboard).toContain(name);
    const rules = ruleExpressions().exprs.join('\n');
    for (const condition of [
      'rewards_etl_watermark_lag_seconds',
      'rewards_etl_windows{state="failed"}',
      'rewards_etl_alerts_undelivered',
      'rewards_etl_oauth_needs_reauthorization',
      'rewards_etl_stream_last_success_timestamp_seconds',
    ])
      expect(rules).toContain(condition);
  });
});
