import type { Migration } from 'kysely';
import * as warehouse from './20261122_0001_warehouse.js';
import * as windowKeyset from './20261122_0002_window_keyset_checkpoint.js';
import * as statusIndexes from './20261122_0003_status_and_polling_indexes.js';
import * as checkinsSoftDelete from './20261124_0004_checkins_soft_delete.js';
import * as members from './20261124_0005_members.js';
import * as memberDataPolicy from './20261125_0006_member_data_follows_policy.js';
import * as leases from './20261125_0007_leases.js';
import * as checkinsPartitioned from './20261126_0008_checkins_partitioned.js';
import * as checkinsDailyRollup from './20261126_0009_checkins_daily_rollup.js';
import * as schemaDriftAndEvents from './20261126_0011_schema_drift_and_events.js';
import * as freshness from './20261126_0012_freshness.js';
import * as checkinsSettledMedians from './20261127_0013_checkins_settled_medians.js';
import * as checkinsMedianFunction from './20261127_0014_checkins_median_function.js';
import * as checkinsCountedByPage from './20261127_0015_checkins_counted_by_page.js';

/** Listed statically so the same code runs from source (tsx) and from dist without a directory scan. */
export const migrations: Record<string, Migration> = {
  '20261122_0001_warehouse': warehouse,
  '20261122_0002_window_keyset_checkpoint': windowKeyset,
  '20261122_0003_status_and_polling_indexes': statusIndexes,
  '20261124_0004_checkins_soft_delete': checkinsSoftDelete,
  '20261124_0005_members': members,
  '20261125_0006_member_data_follows_policy': memberDataPolicy,
  '20261125_0007_leases': leases,
  '20261126_0008_checkins_partitioned': checkinsPartitioned,
  '20261126_0009_checkins_daily_rollup': checkinsDailyRollup,
  '20261126_0011_schema_drift_and_events': schemaDriftAndEvents,
  '20261126_0012_freshness': freshness,
  '20261127_0013_checkins_settled_medians': checkinsSettledMedians,
  '20261127_0014_checkins_median_function': checkinsMedianFunction,
  '20261127_0015_checkins_counted_by_page': checkinsCountedByPage,
};
