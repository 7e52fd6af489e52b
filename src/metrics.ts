import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { STREAM_NAMES } from './sync/stream-facts.js';

/**
 * The pipeline's Prometheus metrics, one registry per process (no global registry, so tests
 * and several workers in one process do not collide). Gauges that describe shared state
 * (lag, windows, open intents, queue depths) are refreshed from Postgres/Redis on scrape.
 */
export interface PipelineMetrics {
  registry: Registry;
  apiRequests: Counter<'route' | 'status'>;
  apiRequestSeconds: Histogram<'route'>;
  apiRetries: Counter<'route' | 'reason'>;
  api429s: Counter<'route'>;
  limiterWaitSeconds: Counter;
  rowsIngested: Counter<'stream'>;
  recordsRejected: Counter<'stream'>;
  passes: Counter<'stream' | 'status'>;
  watermarkLagSeconds: Gauge<'stream'>;
  windowsByState: Gauge<'state'>;
  queueDepth: Gauge<'queue' | 'state'>;
  openIntents: Gauge;
  alertDeliveries: Counter<'outcome'>;
  alertsUndelivered: Gauge;
  alertsFailed: Gauge;
  streamLastSuccess: Gauge<'stream'>;
  streamInterval: Gauge<'stream'>;
  oauthNeedsReauthorization: Gauge;
  oauthRefreshes: Counter<'outcome'>;
  schemaDriftFields: Gauge<'change'>;
  schemaDriftRecords: Counter<'resource' | 'change'>;
}

type Registers = Registry[];

/** The partner API client: requests, latency, retries, 429s and the shared rate limit. */
function apiMetrics(
  registers: Registers,
): Pick<
  PipelineMetrics,
  'apiRequests' | 'apiRequestSeconds' | 'apiRetries' | 'api429s' | 'limiterWaitSeconds'
> {
  return {
    apiRequests: new Counter({
      name: 'rewards_etl_api_requests_total',
      help: 'Requests to the partner API by route template and HTTP status (or error kind)',
      labelNames: ['route', 'status'],
      registers,
    }),
    apiRequestSeconds: new Histogram({
      name: 'rewards_etl_api_request_seconds',
      help: 'Partner API request latency',
      labelNames: ['route'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    apiRetries: new Counter({
      name: 'rewards_etl_api_retries_total',
      help: 'Retried partner API requests',
      labelNames: ['route', 'reason'],
      registers,
    }),
    api429s: new Counter({
      name: 'rewards_etl_api_rate_limited_total',
      help: '429 answers from the partner API',
      labelNames: ['route'],
      registers,
    }),
    limiterWaitSeconds: new Counter({
      name: 'rewards_etl_limiter_wait_seconds_total',
      help: 'Time spent waiting for the shared rate limit',
      registers,
    }),
  };
}

/** Stream passes and what they wrote; lag and windows are refreshed on scrape. */
function passMetrics(
  registers: Registers,
): Pick<
  PipelineMetrics,
  'rowsIngested' | 'recordsRejected' | 'passes' | 'watermarkLagSeconds' | 'windowsByState'
> {
  return {
    rowsIngested: new Counter({
      name: 'rewards_etl_rows_ingested_total',
      help: 'Records written to the warehouse by stream',
      labelNames: ['stream'],
      registers,
    }),
    recordsRejected: new Counter({
      name: 'rewards_etl_records_rejected_total',
      help: 'Records that failed validation and went to rejected_records',
      labelNames: ['stream'],
      registers,
    }),
    passes: new Counter({
      name: 'rewards_etl_passes_total',
      help: 'Stream passes by outcome',
      labelNames: ['stream', 'status'],
      registers,
    }),
    watermarkLagSeconds: new Gauge({
      name: 'rewards_etl_watermark_lag_seconds',
      help: 'Now minus the stream watermark',
      labelNames: ['stream'],
      registers,
    }),
    windowsByState: new Gauge({
      name: 'rewards_etl_windows',
      help: 'Check-in windows by state',
      labelNames: ['state'],
      registers,
    }),
  };
}

/** Work waiting: BullMQ jobs and the payment intents still polled (refreshed on scrape). */
function backlogMetrics(registers: Registers): Pick<PipelineMetrics, 'queueDepth' | 'openIntents'> {
  return {
    queueDepth: new Gauge({
      name: 'rewards_etl_queue_jobs',
      help: 'BullMQ jobs by queue and state',
      labelNames: ['queue', 'state'],
      registers,
    }),
    openIntents: new Gauge({
      name: 'rewards_etl_open_payment_intents',
      help: 'Payment intents still pending and polled',
      registers,
    }),
  };
}

/** Alert webhook delivery. */
function alertMetrics(
  registers: Registers,
): Pick<PipelineMetrics, 'alertDeliveries' | 'alertsUndelivered' | 'alertsFailed'> {
  return {
    alertDeliveries: new Counter({
      name: 'rewards_etl_alert_deliveries_total',
      help: 'Alert webhook delivery attempts by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    alertsUndelivered: new Gauge({
      name: 'rewards_etl_alerts_undelivered',
      help: 'Alerts not yet delivered and not given up on',
      registers,
    }),
    alertsFailed: new Gauge({
      name: 'rewards_etl_alerts_failed',
      help: 'Alerts given up on after repeated delivery failures',
      registers,
    }),
  };
}

/** Each stream's configured interval and the start of its latest successful pass. */
function scheduleMetrics(
  registers: Registers,
): Pick<PipelineMetrics, 'streamLastSuccess' | 'streamInterval'> {
  return {
    streamLastSuccess: new Gauge({
      name: 'rewards_etl_stream_last_success_timestamp_seconds',
      help: 'Start (unix seconds) of the latest successful pass of the stream, from sync_runs; absent before the first',
      labelNames: ['stream'],
      registers,
    }),
    streamInterval: new Gauge({
      name: 'rewards_etl_stream_interval_seconds',
      help: "The stream's configured schedule interval (*_EVERY)",
      labelNames: ['stream'],
      registers,
    }),
  };
}

/** The OAuth token: refreshes, and whether an operator must run `rewards-etl auth`. */
function oauthMetrics(
  registers: Registers,
): Pick<PipelineMetrics, 'oauthNeedsReauthorization' | 'oauthRefreshes'> {
  return {
    oauthNeedsReauthorization: new Gauge({
      name: 'rewards_etl_oauth_needs_reauthorization',
      help: '1 when the stored OAuth refresh token was revoked (invalid_grant): run `rewards-etl auth`',
      registers,
    }),
    oauthRefreshes: new Counter({
      name: 'rewards_etl_oauth_token_refreshes_total',
      help: 'OAuth access-token refreshes by outcome (ok, failed, revoked)',
      labelNames: ['outcome'],
      registers,
    }),
  };
}

/** Partner API schema drift (rewards.schema_drift). */
function schemaDriftMetrics(
  registers: Registers,
): Pick<PipelineMetrics, 'schemaDriftFields' | 'schemaDriftRecords'> {
  return {
    schemaDriftFields: new Gauge({
      name: 'rewards_etl_schema_drift_fields',
      help: 'Fields recorded in rewards.schema_drift, by change (added, missing, type_changed)',
      labelNames: ['change'],
      registers,
    }),
    schemaDriftRecords: new Counter({
      name: 'rewards_etl_schema_drift_records_total',
      help: 'Records this process read that showed schema drift, by resource and change',
      labelNames: ['resource', 'change'],
      registers,
    }),
  };
}

/** Every value the labels of the counters the alert rules and the dashboard select can take. */
export const KNOWN_LABEL_VALUES = {
  passStatus: ['succeeded', 'partial', 'failed', 'lease_lost'],
  alertDeliveryOutcome: ['delivered', 'failed', 'gave_up'],
  oauthRefreshOutcome: ['ok', 'failed', 'revoked'],
} as const;

/**
 * Labelled counters at 0 for every known label value from start-up. prom-client creates a series on
 * its first `inc`, and `increase()` cannot see a series' first sample: a worker's first failed
 * delivery (or first success after it) went unseen, so RewardsEtlAlertDeliveriesFailing fired too
 * late and did not resolve (issue 40). `deploy/prometheus/rewards-etl-alerts.test.yml` proves the rules.
 */
export function initializeKnownSeries(metrics: PipelineMetrics): void {
  for (const stream of STREAM_NAMES) {
    for (const status of KNOWN_LABEL_VALUES.passStatus) metrics.passes.inc({ stream, status }, 0);
    metrics.rowsIngested.inc({ stream }, 0);
    metrics.recordsRejected.inc({ stream }, 0);
  }
  for (const outcome of KNOWN_LABEL_VALUES.alertDeliveryOutcome) metrics.alertDeliveries.inc({ outcome }, 0);
  for (const outcome of KNOWN_LABEL_VALUES.oauthRefreshOutcome) metrics.oauthRefreshes.inc({ outcome }, 0);
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): PipelineMetrics {
  const metrics = registerMetrics(options);
  initializeKnownSeries(metrics);
  return metrics;
}

function registerMetrics(options: { defaultMetrics?: boolean }): PipelineMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? false) collectDefaultMetrics({ register: registry, prefix: 'rewards_etl_' });
  const registers = [registry];
  return {
    registry,
    ...apiMetrics(registers),
    ...passMetrics(registers),
    ...backlogMetrics(registers),
    ...alertMetrics(registers),
    ...scheduleMetrics(registers),
    ...oauthMetrics(registers),
    ...schemaDriftMetrics(registers),
  };
}
