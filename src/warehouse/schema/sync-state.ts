import type { ColumnType, Generated } from 'kysely';
import type { WindowStatus } from '../../sync/windows.js';
import type { Timestamp, DefaultedTimestamp, Int8, Json } from './columns.js';

// The pipeline's own bookkeeping: windows, watermarks, runs, read cadences, leases, rejected
// records, OAuth tokens, schema drift. Assembled into `DB` by ../schema.ts.

export interface SyncWindowsTable {
  stream: string;
  window_start: Timestamp;
  window_end: Timestamp;
  status: ColumnType<WindowStatus, WindowStatus | undefined, WindowStatus>;
  api_total_count: number | null;
  rows_seen: Generated<number>;
  rows_rejected: Generated<number>;
  pages: Generated<number>;
  next_page: Generated<number>;
  first_total_count: number | null;
  repages: Generated<number>;
  attempts: Generated<number>;
  completed_at: Timestamp | null;
  verified_at: Timestamp | null;
  last_error: string | null;
  updated_at: DefaultedTimestamp;
  cursor_before: Timestamp | null;
  cursor_page: Generated<number>;
  attempt_started_at: Timestamp | null;
  rows_removed: Generated<number>;
  last_checked_at: Timestamp | null;
  /** When a consistent paging first missed rows the warehouse holds (not yet acted on). */
  drop_suspected_at: Timestamp | null;
  next_attempt_at: Timestamp | null;
}

export interface SyncStateTable {
  stream: string;
  watermark: Timestamp | null;
  state: ColumnType<unknown, string | undefined, string>;
  updated_at: DefaultedTimestamp;
}

export type SyncRunStatus = 'running' | 'succeeded' | 'failed' | 'partial';

export interface SyncRunsTable {
  id: Generated<string>;
  stream: string;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  status: ColumnType<SyncRunStatus, SyncRunStatus | undefined, SyncRunStatus>;
  requests: Generated<number>;
  rows: Generated<number>;
  error: string | null;
  details: ColumnType<unknown, string | undefined, string>;
}

/** One record read on an adaptive cadence (migration 20261126_0012, docs/freshness.md). */
export interface RecordReadsTable {
  kind: string;
  record_id: string;
  last_read_at: Timestamp;
  last_changed_at: Timestamp | null;
  interval_seconds: number;
  next_due_at: Timestamp;
  reads: ColumnType<string, string | number | bigint | undefined, string | number | bigint>;
  unchanged_reads: ColumnType<string, string | number | bigint | undefined, string | number | bigint>;
}

/** One row per piece of exclusive work (migration 0007); see src/leases/. */
export interface LeasesTable {
  name: string;
  holder: string;
  /** The holder's kernel boot and pid namespace (Linux), so a process on the same host can tell it died. */
  host_key: string | null;
  pid: number | null;
  /** Fencing token: int8, a string as pg returns it. */
  token: Int8;
  acquired_at: Timestamp;
  renewed_at: Timestamp;
  expires_at: Timestamp;
}

export interface RejectedRecordsTable {
  id: Generated<string>;
  stream: string;
  record_id: string | null;
  reason: string;
  payload: Json | null;
  payload_hash: string;
  seen_at: DefaultedTimestamp;
  last_seen_at: DefaultedTimestamp;
  times_seen: Generated<number>;
  /** The member a rejected member record belongs to (migration 20261125_0006); null for other streams. */
  member_id: string | null;
}

export interface OAuthTokensTable {
  id: string;
  refresh_token_encrypted: string | null;
  access_token_encrypted: string | null;
  access_token_expires_at: Timestamp | null;
  generation: Generated<number>;
  last_refreshed_at: Timestamp | null;
  last_error: string | null;
  last_error_at: Timestamp | null;
  updated_at: DefaultedTimestamp;
}

/** One kind of drift of one field of one resource (docs/schema-drift.md). */
export interface SchemaDriftTable {
  resource: string;
  field_path: string;
  change: 'added' | 'missing' | 'type_changed';
  first_seen: DefaultedTimestamp;
  last_seen: DefaultedTimestamp;
  count: Generated<Int8>;
  example: Json | null;
}
