import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { WindowStatus } from '../sync/windows.js';

// Kysely types for schema `rewards`, in one place. pg returns numeric and int8 as strings
// (exact), timestamptz as Date. Amount columns take digit strings: never JS numbers.

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Numeric = ColumnType<string, string | bigint, string | bigint>;
type Int8 = ColumnType<string, string | number | bigint, string | number | bigint>;
type Json = ColumnType<unknown, string, string>; // write JSON.stringify'd text: keeps big numbers exact
/** `extra`: a record's unknown fields as JSON text, or null (the default) when it has none. */
type ExtraJson = ColumnType<unknown, string | null | undefined, string | null>;
type TextArray = ColumnType<string[], string[], string[]>;

export interface RestaurantsTable {
  id: string;
  name: string;
  cuisine: ColumnType<string[], string[] | undefined, string[]>;
  cohort: string | null;
  price: number | null;
  tags: ColumnType<unknown, string | undefined, string>;
  asset: Json | null;
  website_url: string | null;
  instagram_url: string | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  raw: Json;
  content_hash: string;
  first_seen_at: DefaultedTimestamp;
  last_seen_at: DefaultedTimestamp;
  deleted_at: Timestamp | null;
}

export interface NeighborhoodsTable {
  id: string;
  name: string;
  region: string | null;
  first_seen_at: DefaultedTimestamp;
  last_seen_at: DefaultedTimestamp;
}

export interface LocationsTable {
  id: string;
  restaurant_id: string | null;
  neighborhood_id: string | null;
  name: string | null;
  slug: string | null;
  street: string | null;
  street2: string | null;
  city: string | null;
  state: string | null;
  zipcode: string | null;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  phone_number: string | null;
  time_zone: string | null;
  payments_enabled: boolean | null;
  is_club: boolean | null;
  reservation_url: string | null;
  reservations_enabled: boolean | null;
  google_place_id: string | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  raw: Json;
  content_hash: string;
  first_seen_at: DefaultedTimestamp;
  last_seen_at: DefaultedTimestamp;
  last_refreshed_at: Timestamp | null;
  deleted_at: Timestamp | null;
}

export interface LocationOpenHoursTable {
  location_id: string;
  hours: Json;
  fetched_at: Timestamp;
}

export interface CheckInsTable {
  id: string;
  location_id: string;
  restaurant_id: string;
  svc_pay_enabled: boolean;
  created_at: Timestamp;
  ended_at: Timestamp | null;
  first_seen_at: DefaultedTimestamp;
  last_seen_at: DefaultedTimestamp;
  /** Set once a drop is confirmed by a second read; cleared when the row is seen again. */
  deleted_at: Timestamp | null;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface ChallengesTable {
  id: string;
  restaurant_id: string;
  type: string;
  title: string | null;
  description: string | null;
  image: string | null;
  threshold: Json;
  spend_threshold_value: Numeric | null;
  spend_threshold_currency: string | null;
  minimum_spend_value: Numeric | null;
  minimum_spend_currency: string | null;
  dine_threshold: number | null;
  referral_threshold: number | null;
  token_reward_value: Numeric | null;
  token_reward_currency: string | null;
  start_time: Timestamp | null;
  end_time: Timestamp | null;
  terms: TextArray;
  accepted_currencies: TextArray;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  raw: Json;
  content_hash: string;
  first_seen_at: DefaultedTimestamp;
  last_seen_at: DefaultedTimestamp;
  deleted_at: Timestamp | null;
}

/** SCD type 2: one row per distinct version; `valid_to` null marks the current one. */
export interface HistoryTable {
  id: string;
  valid_from: Timestamp;
  valid_to: Timestamp | null;
  content_hash: string;
  raw: Json;
}

export interface BalanceSnapshotsTable {
  account_balance_id: string;
  observed_at: Timestamp;
  owner_id: string;
  owner_type: string | null;
  balance_value: Numeric;
  balance_currency: string;
  balance_usd_cents: Int8 | null;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface PaymentIntentsTable {
  id: string;
  payer_account_balance_id: string | null;
  payee_account_balance_id: string | null;
  amount_value: Numeric | null;
  amount_currency: string | null;
  description: string | null;
  status: string;
  expires_at: Timestamp | null;
  canceled_at: Timestamp | null;
  paid_at: Timestamp | null;
  refunded_at: Timestamp | null;
  metadata: Json | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  first_seen_at: DefaultedTimestamp;
  last_polled_at: Timestamp | null;
  next_poll_at: Timestamp | null;
  poll_count: Generated<number>;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface PaymentIntentTransitionsTable {
  id: Generated<string>;
  payment_intent_id: string;
  from_status: string | null;
  to_status: string;
  observed_at: Timestamp;
}

export interface AlertsTable {
  id: string;
  type: string;
  /** What the event is about; unique with `type` (docs/payment-intents.md, "Events"). */
  subject: ColumnType<string, string | undefined, string>;
  /** Set for payment_intent.* events only. */
  payment_intent_id: string | null;
  payload: Json;
  created_at: DefaultedTimestamp;
  delivered_at: Timestamp | null;
  attempts: Generated<number>;
  last_error: string | null;
  next_attempt_at: DefaultedTimestamp;
  failed_at: Timestamp | null;
}

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

export interface CheckInsDailyView {
  day: Date;
  restaurant_id: string;
  location_id: string;
  check_ins: number;
  svc_pay_check_ins: number;
  median_visit_minutes: number | null;
}

/**
 * Kept by triggers on check_ins (migration 0009); read through the check_ins_daily view. An
 * unsettled median is read from the rows until rewards.settle_check_ins_daily stores it (0013).
 */
export interface CheckInsDailyRollupTable extends CheckInsDailyView {
  median_settled: Generated<boolean>;
}

/** New check-ins per hour of first_seen_at, sharded by backend; readers sum the shards. */
export interface CheckInsFirstSeenHourlyTable {
  hour: Int8;
  shard: number;
  rows: Int8;
}

/** What retention removed: partitions of check_ins, sync_windows rows, check_ins_daily rows. */
export interface RetentionLogTable {
  id: Generated<Int8>;
  target: 'check_ins' | 'sync_windows' | 'check_ins_daily';
  range_start: Timestamp | null;
  range_end: Timestamp;
  rows: Int8;
  removed_at: DefaultedTimestamp;
}

export type MemberConnectionStatus = 'active' | 'revoked' | 'needs_reauth';

export interface MemberConnectionsTable {
  member_id: string;
  status: MemberConnectionStatus;
  scopes: ColumnType<string[], string[] | undefined, string[]>;
  connected_at: Timestamp;
  last_synced_at: Timestamp | null;
  last_success_at: Timestamp | null;
  last_error: string | null;
  last_error_at: Timestamp | null;
  check_ins_resume_page: number | null;
}

export interface MembersTable {
  id: string;
  first_name: string;
  last_name: string;
  email: string | null;
  phone_number: string | null;
  birthdate: string | null;
  zipcode: string | null;
  avatar: string | null;
  account_status: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  raw: Json;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface MemberStatusesTable {
  member_id: string;
  has_active_status: boolean;
  status_id: string | null;
  tier: string | null;
  level: number | null;
  track: string | null;
  token_multiplier: number | null;
  state: string | null;
  benefits: Json | null;
  progress: Json | null;
  year_start: Timestamp | null;
  year_end: Timestamp | null;
  started_at: Timestamp | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  raw: Json | null;
  content_hash: string;
  last_seen_at: Timestamp;
}

export interface MemberWalletsTable {
  id: string;
  member_id: string;
  wallet_type: string;
  address: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_seen_at: Timestamp;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface MemberTagsTable {
  member_id: string;
  type: string;
  metadata: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_seen_at: Timestamp;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface MemberCheckInsTable {
  id: string;
  member_id: string;
  location_id: string;
  restaurant_id: string;
  svc_pay_enabled: boolean;
  created_at: Timestamp;
  ended_at: Timestamp | null;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  /** The record's fields its parser does not know (docs/schema-drift.md); null when none. */
  extra: ExtraJson;
}

export interface MembershipsTable {
  id: string;
  member_id: string;
  restaurant_id: string;
  check_in_count: number;
  last_check_in_date: Timestamp | null;
  tier_id: string;
  tier_name: string;
  raw: Json;
  content_hash: string;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
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

export interface DB {
  'rewards.restaurants': RestaurantsTable;
  'rewards.neighborhoods': NeighborhoodsTable;
  'rewards.locations': LocationsTable;
  'rewards.location_open_hours': LocationOpenHoursTable;
  'rewards.check_ins': CheckInsTable;
  'rewards.challenges': ChallengesTable;
  'rewards.restaurants_history': HistoryTable;
  'rewards.locations_history': HistoryTable;
  'rewards.challenges_history': HistoryTable;
  'rewards.balance_snapshots': BalanceSnapshotsTable;
  'rewards.payment_intents': PaymentIntentsTable;
  'rewards.payment_intent_transitions': PaymentIntentTransitionsTable;
  'rewards.alerts': AlertsTable;
  'rewards.sync_windows': SyncWindowsTable;
  'rewards.sync_state': SyncStateTable;
  'rewards.sync_runs': SyncRunsTable;
  'rewards.rejected_records': RejectedRecordsTable;
  'rewards.oauth_tokens': OAuthTokensTable;
  'rewards.check_ins_daily': CheckInsDailyView;
  'rewards.check_ins_daily_rollup': CheckInsDailyRollupTable;
  'rewards.check_ins_first_seen_hourly': CheckInsFirstSeenHourlyTable;
  'rewards.retention_log': RetentionLogTable;
  'rewards.member_connections': MemberConnectionsTable;
  'rewards.members': MembersTable;
  'rewards.member_statuses': MemberStatusesTable;
  'rewards.member_statuses_history': HistoryTable;
  'rewards.member_wallets': MemberWalletsTable;
  'rewards.member_tags': MemberTagsTable;
  'rewards.member_check_ins': MemberCheckInsTable;
  'rewards.memberships': MembershipsTable;
  'rewards.memberships_history': HistoryTable;
  'rewards.leases': LeasesTable;
  'rewards.schema_drift': SchemaDriftTable;
  'rewards.record_reads': RecordReadsTable;
}

export type Restaurant = Selectable<RestaurantsTable>;
export type NewCheckIn = Insertable<CheckInsTable>;
export type SyncWindow = Selectable<SyncWindowsTable>;
export type SyncWindowUpdate = Updateable<SyncWindowsTable>;
export type PaymentIntentRow = Selectable<PaymentIntentsTable>;
export type AlertRow = Selectable<AlertsTable>;
