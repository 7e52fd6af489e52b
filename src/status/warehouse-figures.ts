import { sql, type Kysely } from 'kysely';
import { DEFAULT_TOKEN_ROW, INVALID_GRANT_MARK } from '../api/oauth/token-store.js';
import { countAlertBacklog } from '../alerts/alert-store.js';
import { countConnectionsByStatus } from '../warehouse/member-connections.js';
import type { DB } from '../warehouse/schema.js';
import { loadCheckinsState } from '../warehouse/checkins-feed-state.js';
import { CHECKINS_STREAM } from '../warehouse/sync-window-reads.js';
import {
  WINDOW_STATES,
  type AlertsSummary,
  type CheckinsProgress,
  type FailedPass,
  type IntentsSummary,
  type OAuthStatus,
  type RejectedSummary,
  type RunSummary,
  type WindowsSummary,
} from './status-report.js';

// Read-only queries behind `status`. Each one is small and uses an index, because /metrics runs
// some of them on every scrape. Instants leave here as ISO strings.

const HOUR_MS = 3_600_000;
const ERROR_CHARS = 300;

const iso = (value: Date | null | undefined): string | null => (value ? value.toISOString() : null);

/** Errors are shown, not stored: one line, bounded. */
export function shortError(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > ERROR_CHARS ? `${line.slice(0, ERROR_CHARS - 1)}…` : line;
}

export async function readCheckinsProgress(db: Kysely<DB>, now: Date): Promise<CheckinsProgress> {
  const state = await loadCheckinsState(db);
  return {
    watermark: iso(state.watermark),
    lagSeconds:
      state.watermark === null
        ? null
        : Math.max(0, Math.round((now.getTime() - state.watermark.getTime()) / 1000)),
    frontier: iso(state.frontier),
  };
}

export async function readWindows(db: Kysely<DB>): Promise<WindowsSummary> {
  const [byStatus, failed] = await Promise.all([
    db
      .selectFrom('rewards.sync_windows')
      .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
      .where('stream', '=', CHECKINS_STREAM)
      .groupBy('status')
      .execute(),
    db
      .selectFrom('rewards.sync_windows')
      .select(['window_start', 'window_end', 'attempts', 'last_error', 'next_attempt_at'])
      .where('stream', '=', CHECKINS_STREAM)
      .where('status', '=', 'failed')
      .orderBy('window_start')
      .limit(10)
      .execute(),
  ]);
  const counts = Object.fromEntries(WINDOW_STATES.map((state) => [state, 0])) as WindowsSummary['counts'];
  for (const row of byStatus) counts[row.status] = Number(row.count);
  return {
    counts,
    failed: failed.map((row) => ({
      start: row.window_start.toISOString(),
      end: row.window_end.toISOString(),
      attempts: row.attempts,
      lastError: shortError(row.last_error),
      nextAttemptAt: iso(row.next_attempt_at),
    })),
  };
}

/** The check-in window a worker completed last: the feed's progress, as workers page windows, not passes. */
export interface LastPagedWindow {
  completedAt: string;
  rows: number;
  pages: number;
}

export async function readLastPagedWindow(db: Kysely<DB>): Promise<LastPagedWindow | null> {
  // The (stream, status, window_start) index narrows to complete windows; retention bounds them.
  const row = await db
    .selectFrom('rewards.sync_windows')
    .select(['completed_at', 'rows_seen', 'pages'])
    .where('stream', '=', CHECKINS_STREAM)
    .where('status', '=', 'complete')
    .where('completed_at', 'is not', null)
    .orderBy('completed_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row?.completed_at == null) return null;
  return { completedAt: row.completed_at.toISOString(), rows: row.rows_seen, pages: row.pages };
}

interface RunRow {
  stream: string;
  started_at: Date | null;
  finished_at: Date | null;
  status: RunSummary['status'] | null;
  rows: number | null;
  requests: number | null;
  error: string | null;
  last_success_at: Date | null;
}

/**
 * The latest run and the latest successful run of each stream. A lateral `limit 1` per stream
 * walks the (stream, started_at desc) index, so the cost does not grow with sync_runs.
 */
export async function readLastRuns(
  db: Kysely<DB>,
  streams: readonly string[],
): Promise<Map<string, { lastRun: RunSummary | null; lastSuccessAt: string | null }>> {
  const { rows } = await sql<RunRow>`
    select s.stream, r.started_at, r.finished_at, r.status, r.rows, r.requests, r.error, ok.started_at as last_success_at
    from unnest(${[...streams]}::text[]) as s(stream)
    left join lateral (
      select started_at, finished_at, status, rows, requests, error from rewards.sync_runs
      where stream = s.stream order by started_at desc limit 1
    ) r on true
    left join lateral (
      select started_at from rewards.sync_runs
      where stream = s.stream and status = 'succeeded' order by started_at desc limit 1
    ) ok on true`.execute(db);
  return new Map(
    rows.map((row) => [
      row.stream,
      {
        lastRun:
          row.started_at === null || row.status === null
            ? null
            : {
                startedAt: row.started_at.toISOString(),
                finishedAt: iso(row.finished_at),
                status: row.status,
                rows: row.rows ?? 0,
                requests: row.requests ?? 0,
                error: shortError(row.error),
              },
        lastSuccessAt: iso(row.last_success_at),
      },
    ]),
  );
}

export async function readFailedPasses(
  db: Kysely<DB>,
  streams: readonly string[],
  since: Date,
): Promise<FailedPass[]> {
  const rows = await db
    .selectFrom('rewards.sync_runs')
    .select(['stream', 'started_at', 'status', 'error'])
    .where('stream', 'in', [...streams])
    .where('started_at', '>=', since)
    .where('status', 'in', ['failed', 'partial'])
    .orderBy('started_at', 'desc')
    .limit(10)
    .execute();
  return rows.map((row) => ({
    stream: row.stream,
    startedAt: row.started_at.toISOString(),
    status: row.status === 'partial' ? 'partial' : 'failed',
    error: shortError(row.error),
  }));
}

/**
 * Rows per hour bucket (epoch hour number → rows) for each stream since `since`.
 *
 * Check-ins count rows first written in that hour (`check_ins.first_seen_at`, counted as rows are
 * written into check_ins_first_seen_hourly, so the cost does not grow with the table): the truth
 * whichever process paged them (a `run`, a worker's window job, a backfill), and re-reads of
 * the look-back do not inflate it. The other streams count the rows of the passes started in
 * that hour (`sync_runs.rows`): every record a pass read and upserted, changed or not.
 */
export async function readHourlyRows(
  db: Kysely<DB>,
  streams: readonly string[],
  since: Date,
): Promise<Map<string, Map<number, number>>> {
  const others = streams.filter((stream) => stream !== CHECKINS_STREAM);
  const [checkins, runs] = await Promise.all([
    streams.includes(CHECKINS_STREAM)
      ? sql<{ hour: string; rows: string }>`
          select hour, sum(rows) as rows from rewards.check_ins_first_seen_hourly
          where hour >= floor(extract(epoch from ${since}::timestamptz) / 3600)::bigint group by 1`.execute(
          db,
        )
      : { rows: [] },
    others.length === 0
      ? { rows: [] }
      : sql<{ stream: string; hour: string; rows: string }>`
          select stream, floor(extract(epoch from started_at) / 3600)::bigint as hour, sum(rows) as rows
          from rewards.sync_runs where stream = any(${others}::text[]) and started_at >= ${since}
          group by 1, 2`.execute(db),
  ]);
  const result = new Map<string, Map<number, number>>(streams.map((stream) => [stream, new Map()]));
  for (const row of checkins.rows) result.get(CHECKINS_STREAM)?.set(Number(row.hour), Number(row.rows));
  for (const row of runs.rows) result.get(row.stream)?.set(Number(row.hour), Number(row.rows));
  return result;
}

/** The hour buckets ending with the one holding `now`: epoch hour numbers, oldest first. */
export function hourBuckets(now: Date, hours: number): number[] {
  const current = Math.floor(now.getTime() / HOUR_MS);
  return Array.from({ length: hours }, (_, i) => current - hours + 1 + i);
}

export function hourStart(bucket: number): Date {
  return new Date(bucket * HOUR_MS);
}

export async function readIntents(db: Kysely<DB>): Promise<IntentsSummary> {
  const [count, oldest] = await Promise.all([
    db
      .selectFrom('rewards.payment_intents')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('rewards.payment_intents')
      .select(['id', sql<Date>`coalesce(created_at, first_seen_at)`.as('since')])
      .where('status', '=', 'pending')
      .orderBy(sql`coalesce(created_at, first_seen_at)`)
      .limit(1)
      .executeTakeFirst(),
  ]);
  return { open: Number(count.count), oldestOpenAt: iso(oldest?.since), oldestOpenId: oldest?.id ?? null };
}

export async function readAlerts(db: Kysely<DB>): Promise<AlertsSummary> {
  const [backlog, retrying, failures] = await Promise.all([
    countAlertBacklog(db),
    db
      .selectFrom('rewards.alerts')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('delivered_at', 'is', null)
      .where('failed_at', 'is', null)
      .where('last_error', 'is not', null)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('rewards.alerts')
      .select([
        'id',
        'type',
        'subject',
        'payment_intent_id',
        'attempts',
        'last_error',
        'failed_at',
        'next_attempt_at',
      ])
      .where('delivered_at', 'is', null)
      .where('last_error', 'is not', null)
      .orderBy(sql`coalesce(failed_at, next_attempt_at)`, 'desc')
      .limit(5)
      .execute(),
  ]);
  return {
    undelivered: backlog.undelivered,
    retrying: Number(retrying.count),
    failed: backlog.failed,
    recentFailures: failures.map((row) => ({
      id: row.id,
      type: row.type,
      subject: row.subject,
      paymentIntentId: row.payment_intent_id,
      attempts: row.attempts,
      lastError: shortError(row.last_error) ?? '',
      failedAt: iso(row.failed_at),
      nextAttemptAt: row.failed_at === null ? iso(row.next_attempt_at) : null,
    })),
  };
}

export async function readRejected(db: Kysely<DB>, since: Date): Promise<RejectedSummary> {
  const [byStream, recent] = await Promise.all([
    db
      .selectFrom('rewards.rejected_records')
      .select([
        'stream',
        (eb) => eb.fn.countAll<string>().as('count'),
        sql<string>`count(*) filter (where last_seen_at >= ${since})`.as('recent'),
      ])
      .groupBy('stream')
      .orderBy('stream')
      .execute(),
    db
      .selectFrom('rewards.rejected_records')
      .select(['stream', 'record_id', 'reason', 'last_seen_at', 'times_seen'])
      .orderBy('last_seen_at', 'desc')
      .limit(5)
      .execute(),
  ]);
  return {
    total: byStream.reduce((sum, row) => sum + Number(row.count), 0),
    last24h: byStream.reduce((sum, row) => sum + Number(row.recent), 0),
    byStream: byStream.map((row) => ({ stream: row.stream, count: Number(row.count) })),
    recent: recent.map((row) => ({
      stream: row.stream,
      recordId: row.record_id,
      reason: shortError(row.reason) ?? '',
      lastSeenAt: row.last_seen_at.toISOString(),
      timesSeen: row.times_seen,
    })),
  };
}

/** Token state without the tokens: only whether one is stored, never its (sealed) value. */
export async function readOAuth(db: Kysely<DB>, configured: boolean): Promise<OAuthStatus> {
  const row = await db
    .selectFrom('rewards.oauth_tokens')
    .select([
      sql<boolean>`refresh_token_encrypted is not null`.as('has_refresh_token'),
      'access_token_expires_at',
      'last_refreshed_at',
      'last_error',
      'last_error_at',
    ])
    .where('id', '=', DEFAULT_TOKEN_ROW)
    .executeTakeFirst();
  const members = await countConnectionsByStatus(db);
  return {
    configured,
    hasRefreshToken: row?.has_refresh_token ?? false,
    accessTokenExpiresAt: iso(row?.access_token_expires_at),
    lastRefreshedAt: iso(row?.last_refreshed_at),
    lastError: shortError(row?.last_error),
    lastErrorAt: iso(row?.last_error_at),
    needsReauthorization: row?.last_error?.startsWith(INVALID_GRANT_MARK) ?? false,
    members: { active: members.active, needsReauth: members.needs_reauth, revoked: members.revoked },
  };
}
