import type { ColumnType } from 'kysely';
import type { Timestamp, DefaultedTimestamp, Numeric, Json, TextArray } from './columns.js';

// The partner's catalog: restaurants, neighborhoods, locations, challenges and their SCD2
// history. Assembled into `DB` by ../schema.ts.

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
