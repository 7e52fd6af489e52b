import type { Insertable, Selectable, Updateable } from 'kysely';
import type {
  RestaurantsTable,
  NeighborhoodsTable,
  LocationsTable,
  LocationOpenHoursTable,
  ChallengesTable,
  HistoryTable,
} from './schema/catalog.js';
import type {
  CheckInsTable,
  CheckInsDailyView,
  CheckInsDailyRollupTable,
  CheckInsFirstSeenHourlyTable,
  RetentionLogTable,
} from './schema/check-ins.js';
import type {
  BalanceSnapshotsTable,
  PaymentIntentsTable,
  PaymentIntentTransitionsTable,
  AlertsTable,
} from './schema/payments.js';
import type {
  SyncWindowsTable,
  SyncStateTable,
  SyncRunsTable,
  RecordReadsTable,
  LeasesTable,
  RejectedRecordsTable,
  OAuthTokensTable,
  SchemaDriftTable,
} from './schema/sync-state.js';
import type {
  MemberConnectionsTable,
  MembersTable,
  MemberStatusesTable,
  MemberWalletsTable,
  MemberTagsTable,
  MemberCheckInsTable,
  MembershipsTable,
} from './schema/members.js';

// Kysely types for schema `rewards`: the table interfaces, grouped by area in src/warehouse/schema/,
// assembled here into `DB`. pg returns numeric and int8 as strings (exact), timestamptz as Date.
// Amount columns take digit strings: never JS numbers.

export type * from './schema/catalog.js';
export type * from './schema/check-ins.js';
export type * from './schema/payments.js';
export type * from './schema/sync-state.js';
export type * from './schema/members.js';

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
