import type { Generated } from 'kysely';
import type { Timestamp, DefaultedTimestamp, Int8, ExtraJson } from './columns.js';

// Check-ins, their daily rollup and hourly counts, and what retention removed. Assembled into
// `DB` by ../schema.ts.

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
