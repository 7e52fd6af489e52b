// What `status`, `/status.json`, `/metrics` and the status page show: plain data, JSON-ready
// (instants are ISO strings), and never a secret: token values are not even read.

import type { WorkerRecord } from '../worker/worker-records.js';
import type { RecordKindFreshness } from '../warehouse/record-reads.js';

export const WINDOW_STATES = ['pending', 'running', 'complete', 'failed'] as const;
export type WindowState = (typeof WINDOW_STATES)[number];

/** The BullMQ states we count, in the order the tables show them. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export interface StatusReport {
  generatedAt: string;
  verdict: Verdict;
  checkins: CheckinsProgress;
  windows: WindowsSummary;
  queues: QueuesSummary;
  workers: WorkersSummary;
  streams: StreamStatus[];
  throughput: HourlyThroughput;
  failedPasses: FailedPass[];
  intents: IntentsSummary;
  alerts: AlertsSummary;
  rejected: RejectedSummary;
  oauth: OAuthStatus;
  /** rewards.schema_drift, most recently seen first (at most 100; docs/schema-drift.md). */
  schemaDrift: SchemaDriftEntry[];
  retention: RetentionStatus;
  freshness: FreshnessSummary;
  budget: BudgetSummary;
}

/** One field of one resource whose shape changed: added, missing or of another type. */
export interface SchemaDriftEntry {
  resource: string;
  fieldPath: string;
  change: 'added' | 'missing' | 'type_changed';
  firstSeen: string;
  lastSeen: string;
  /** Records that showed it. */
  count: number;
  /** One value received (null for `missing`); for member resources as MEMBER_PII keeps it. */
  example: unknown;
}

/** What the rate limit buys (docs/freshness.md): requests per stream and the age of each kind of record. */
export interface FreshnessSummary {
  /** API requests of the passes started in the last hour, per stream (sync_runs.requests). */
  requestsLastHour: Array<{ stream: string; requests: number }>;
  /** Per kind of record read on an adaptive cadence. */
  kinds: RecordKindFreshness[];
}

/**
 * One budget across streams (docs/rate-limit.md): per stream its share, what the spend ledger
 * counted in the last hour (every process), and its allowance for the next hour.
 */
export type BudgetSummary =
  | { available: true; limitPerHour: number; streams: BudgetStreamRow[] }
  | { available: false; reason: string; limitPerHour: number; streams: [] };

export interface BudgetStreamRow {
  stream: string;
  /** The stream's share of the limit: the floor it keeps while it has work (0: none). */
  share: number;
  floorPerHour: number;
  /** Requests the spend ledger counted against the stream in the last hour. */
  requestsLastHour: number;
  /** What it is taken to want next hour: its last hour's spend; members, their records due now. */
  demandPerHour: number;
  allowancePerHour: number;
}

export interface Verdict {
  ok: boolean;
  /** Short sentences, most urgent first: "2 failed windows", "last balance pass failed". */
  problems: string[];
}

export interface CheckinsProgress {
  /** Everything created before this instant is in the warehouse (complete, contiguous windows). */
  watermark: string | null;
  lagSeconds: number | null;
  /** End of the planned range: the next plan starts here. */
  frontier: string | null;
}

export interface FailedWindow {
  start: string;
  end: string;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
}

export interface WindowsSummary {
  counts: Record<WindowState, number>;
  /** Oldest first, at most 10. */
  failed: FailedWindow[];
}

export interface QueueDepth {
  queue: string;
  counts: Record<QueueState, number>;
}

export type QueuesSummary =
  { available: true; queues: QueueDepth[] } | { available: false; reason: string; queues: [] };

/**
 * The worker processes on this Redis, as each reports itself every 5 s (liveness watchdog). A
 * stuck one has a queue worker idle with jobs ready for WORKER_IDLE_TIMEOUT: it exits 1 to be
 * restarted by its supervisor.
 */
export type WorkersSummary =
  | {
      available: true;
      /** Records refreshed within the last 30 s, newest first. */
      live: WorkerRecord[];
      /** Records older than that (a process that was killed or lost Redis) still in the hash. */
      gone: number;
    }
  | { available: false; reason: string; live: []; gone: 0 };

export interface RunSummary {
  startedAt: string;
  finishedAt: string | null;
  status: 'running' | 'succeeded' | 'failed' | 'partial';
  rows: number;
  requests: number;
  error: string | null;
  /** `window`: the check-in window a worker completed last (rows and pages of that window), shown
   * for `checkins` when it is newer than the last pass: workers page windows, not passes. */
  kind?: 'window';
}

export interface StreamStatus {
  stream: string;
  intervalSeconds: number;
  lastRun: RunSummary | null;
  lastSuccessAt: string | null;
  /** Last start plus the schedule interval; null before the first run. */
  nextDueAt: string | null;
}

export interface HourlyThroughput {
  /** Start of each hour bucket, oldest first; the last one is the current (partial) hour. */
  hours: string[];
  series: Array<{ stream: string; rows: number[] }>;
  /** Where the figures come from, for the reader of the JSON. */
  source: string;
}

export interface FailedPass {
  stream: string;
  startedAt: string;
  status: 'failed' | 'partial';
  error: string | null;
}

export interface IntentsSummary {
  open: number;
  /** created_at (or first sight) of the oldest intent still pending. */
  oldestOpenAt: string | null;
  oldestOpenId: string | null;
}

export interface AlertFailure {
  id: string;
  /** The event type (`payment_intent.paid`, `schema.drift`, …; ALERT_EVENTS). */
  type: string;
  /** What the event is about: the intent id, the drift, the member. */
  subject: string;
  /** null for events that are not about an intent. */
  paymentIntentId: string | null;
  attempts: number;
  lastError: string;
  failedAt: string | null;
  nextAttemptAt: string | null;
}

export interface AlertsSummary {
  undelivered: number;
  /** Undelivered alerts whose last attempt failed: being retried. */
  retrying: number;
  failed: number;
  /** Latest first, at most 5: given up on or retrying. */
  recentFailures: AlertFailure[];
}

export interface RejectedRecord {
  stream: string;
  recordId: string | null;
  reason: string;
  lastSeenAt: string;
  timesSeen: number;
}

export interface RejectedSummary {
  total: number;
  last24h: number;
  byStream: Array<{ stream: string; count: number }>;
  /** Latest first, at most 5. */
  recent: RejectedRecord[];
}

export interface OAuthStatus {
  configured: boolean;
  hasRefreshToken: boolean;
  accessTokenExpiresAt: string | null;
  lastRefreshedAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  /** The refresh token was revoked (invalid_grant): run `auth` again. */
  needsReauthorization: boolean;
  /** Connected members by connection state (`rewards-etl members list` has the detail). */
  members: { active: number; needsReauth: number; revoked: number };
}

/** CHECKINS_RETENTION and what it removed (rewards.retention_log); docs/warehouse-scale.md#retention. */
export interface RetentionStatus {
  /** Raw check-ins kept this long; null: kept forever (retention off). */
  checkInsSeconds: number | null;
  /** check_ins_daily rows kept this long; null: kept forever. */
  rollupSeconds: number | null;
  /** Per target (check_ins partitions, sync_windows, check_ins_daily): rows removed in all and up to where. */
  removed: { target: string; rows: number; removals: number; through: string; lastAt: string }[];
}
