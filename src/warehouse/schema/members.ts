import type { ColumnType } from 'kysely';
import type { Timestamp, Json, ExtraJson } from './columns.js';

// Members (OAuth connections) and what is read on their behalf. Assembled into `DB` by
// ../schema.ts.

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
