import type { RedisClient } from '../redis/connection.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { readRetentionSummary } from '../warehouse/retention.js';
import { type Config } from '../config/config.js';
import { secretValues } from '../config/secret-values.js';
import { STREAMS } from '../streams/registry.js';
import { STREAM_NAMES } from '../sync/stream-facts.js';
import type { DB } from '../warehouse/schema.js';
import { countSchemaDriftByChange, listSchemaDrift } from '../warehouse/schema-drift.js';
import { readFreshness, readRequestsSince } from '../warehouse/record-reads.js';
import { readQueueDepths, readWorkers } from './queue-depths.js';
import { readBudget } from './read-budget.js';
import type { StatusReport, StreamStatus } from './status-report.js';
import { assessStatus, thresholdsFor } from './verdict.js';
import {
  hourBuckets,
  hourStart,
  readAlerts,
  readCheckinsProgress,
  readFailedPasses,
  readHourlyRows,
  readIntents,
  readLastPagedWindow,
  readLastRuns,
  readOAuth,
  type LastPagedWindow,
  readRejected,
  readWindows,
} from './warehouse-figures.js';

export interface StatusSources {
  db: Kysely<DB>;
  /** Without it (or when it does not answer) queue depths are reported as unknown, not as zero. */
  redis?: RedisClient | undefined;
  config: Config;
  clock: Clock;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const CHART_HOURS = 24;

/** Awaits every promise of `reads` at once (as Promise.all does), keeping their names. */
async function inParallel<T extends Record<string, unknown>>(reads: {
  [K in keyof T]: Promise<T[K]>;
}): Promise<T> {
  const entries = await Promise.all(
    Object.entries(reads).map(async ([name, read]) => [name, await (read as Promise<unknown>)] as const),
  );
  return Object.fromEntries(entries) as T;
}

/** Every figure of the report, read in parallel from Postgres (and Redis when given). */
function readStatusFigures(sources: StatusSources, now: Date, buckets: number[]) {
  const { db, redis, config, clock } = sources;
  const dayAgo = new Date(now.getTime() - DAY_MS);
  return inParallel({
    checkins: readCheckinsProgress(db, now),
    windows: readWindows(db),
    queues: readQueueDepths(redis, config.redisPrefix),
    workers: readWorkers(redis, config.redisPrefix, now.getTime()),
    lastRuns: readLastRuns(db, STREAM_NAMES),
    lastWindow: readLastPagedWindow(db),
    hourly: readHourlyRows(db, STREAM_NAMES, hourStart(buckets[0] ?? 0)),
    failedPasses: readFailedPasses(db, STREAM_NAMES, dayAgo),
    intents: readIntents(db),
    alerts: readAlerts(db),
    rejected: readRejected(db, dayAgo),
    oauth: readOAuth(db, config.oauth !== undefined),
    schemaDrift: listSchemaDrift(db),
    retention: readRetentionSummary(db),
    kinds: readFreshness(db, now, (kind) => config.freshness.cadences[kind].ceilingMs / 1000),
    requestsLastHour: readRequestsSince(db, STREAM_NAMES, new Date(now.getTime() - HOUR_MS)),
    budget: readBudget({ db, redis, config, clock }),
  });
}

type LastRuns = Awaited<ReturnType<typeof readLastRuns>>;

/**
 * Workers page check-ins as window jobs and record no `checkins` pass, so a stream judged by its
 * passes looked idle (`never`) on a healthy feed, or stale after one manual `run checkins`. The
 * window a worker completed last counts as the stream's latest successful run when it is newer.
 */
export function withWindowProgress(lastRuns: LastRuns, lastWindow: LastPagedWindow | null): LastRuns {
  if (lastWindow === null) return lastRuns;
  const runs = lastRuns.get('checkins');
  const lastRun = runs?.lastRun ?? null;
  const out = new Map(lastRuns);
  const newer = (at: string | null | undefined) => at == null || at < lastWindow.completedAt;
  out.set('checkins', {
    lastRun:
      lastRun === null || (lastRun.status !== 'running' && newer(lastRun.startedAt))
        ? {
            startedAt: lastWindow.completedAt,
            finishedAt: lastWindow.completedAt,
            status: 'succeeded',
            rows: lastWindow.rows,
            requests: lastWindow.pages,
            error: null,
            kind: 'window',
          }
        : lastRun,
    lastSuccessAt: newer(runs?.lastSuccessAt) ? lastWindow.completedAt : (runs?.lastSuccessAt ?? null),
  });
  return out;
}

/** Each stream's schedule: its interval, its latest run and success, and when it is next due. */
function streamStatuses(config: Config, lastRuns: LastRuns): StreamStatus[] {
  return STREAM_NAMES.map((stream): StreamStatus => {
    const intervalMs = STREAMS[stream].everyMs(config);
    const runs = lastRuns.get(stream);
    const lastRun = runs?.lastRun ?? null;
    return {
      stream,
      intervalSeconds: intervalMs / 1000,
      lastRun,
      lastSuccessAt: runs?.lastSuccessAt ?? null,
      nextDueAt:
        lastRun === null ? null : new Date(new Date(lastRun.startedAt).getTime() + intervalMs).toISOString(),
    };
  });
}

function throughputChart(
  buckets: number[],
  hourly: Awaited<ReturnType<typeof readHourlyRows>>,
): StatusReport['throughput'] {
  return {
    hours: buckets.map((bucket) => hourStart(bucket).toISOString()),
    series: STREAM_NAMES.map((stream) => ({
      stream,
      rows: buckets.map((bucket) => hourly.get(stream)?.get(bucket) ?? 0),
    })),
    source:
      'checkins: new check-ins by check_ins.first_seen_at; other streams: sync_runs.rows of passes started in the hour',
  };
}

/** Everything `status` shows, read in parallel from Postgres (and Redis when given). */
export async function collectStatus(sources: StatusSources): Promise<StatusReport> {
  const { config, clock } = sources;
  const now = clock.now();
  const buckets = hourBuckets(now, CHART_HOURS);
  const figures = await readStatusFigures(sources, now, buckets);
  const { checkins, windows, queues, workers, failedPasses, intents, alerts, rejected } = figures;
  const body: Omit<StatusReport, 'verdict'> = {
    generatedAt: now.toISOString(),
    checkins,
    windows,
    queues,
    workers,
    streams: streamStatuses(config, withWindowProgress(figures.lastRuns, figures.lastWindow)),
    throughput: throughputChart(buckets, figures.hourly),
    failedPasses,
    intents,
    alerts,
    rejected,
    oauth: figures.oauth,
    schemaDrift: figures.schemaDrift,
    retention: {
      checkInsSeconds: secondsOrNull(config.checkins.retentionMs),
      rollupSeconds: secondsOrNull(config.checkins.rollupRetentionMs),
      removed: figures.retention.targets,
    },
    freshness: { requestsLastHour: figures.requestsLastHour, kinds: figures.kinds },
    budget: figures.budget,
  };
  const report: StatusReport = { ...body, verdict: assessStatus(body, thresholdsFor(config)) };
  return scrubSecrets(report, knownSecrets(config));
}

const secondsOrNull = (ms: number | undefined) => (ms === undefined ? null : ms / 1000);

/** The figures behind the /metrics gauges only: cheaper than the whole report, run on every scrape. */
export async function collectGaugeFigures(sources: StatusSources) {
  const { db, redis, config, clock } = sources;
  const [checkins, windows, queues, intents, alerts, passRuns, lastWindow, oauth, schemaDrift] =
    await Promise.all([
      readCheckinsProgress(db, clock.now()),
      readWindows(db),
      readQueueDepths(redis, config.redisPrefix),
      readIntents(db),
      readAlerts(db),
      readLastRuns(db, STREAM_NAMES),
      readLastPagedWindow(db),
      readOAuth(db, config.oauth !== undefined),
      countSchemaDriftByChange(db),
    ]);
  const lastRuns = withWindowProgress(passRuns, lastWindow);
  const streams = STREAM_NAMES.map((stream) => ({
    stream,
    intervalSeconds: STREAMS[stream].everyMs(config) / 1000,
    lastSuccessAt: lastRuns.get(stream)?.lastSuccessAt ?? null,
  }));
  return { checkins, windows, queues, intents, alerts, streams, oauth, schemaDrift };
}

export type GaugeFigures = Awaited<ReturnType<typeof collectGaugeFigures>>;

/** Secret values of the configuration, URL passwords included: what `scrubSecrets` removes. */
export function knownSecrets(config: Config): string[] {
  return secretValues(config);
}

/**
 * Error texts come from libraries and remote servers (a webhook URL with a token in its query,
 * say): any known secret value in any string of the report is replaced. Second line of defence;
 * the readers never select token columns in the first place.
 */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const scrub = (item: unknown): unknown => {
    if (typeof item === 'string')
      return secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), item);
    if (Array.isArray(item)) return item.map(scrub);
    if (item !== null && typeof item === 'object') {
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, scrub(inner)]));
    }
    return item;
  };
  return scrub(value) as T;
}
