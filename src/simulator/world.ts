import type { CheckInIdCodec } from './check-in-ids.js';
import type { CheckInStore } from './check-in-store.js';
import type { Rhythm } from './data/rhythm.js';
import type { Timeline } from './timeline.js';
import type { TruthLog } from './truth-log.js';
import type { WorldIndex } from './world-index.js';

/** In-memory records of the simulated partner. Timestamps are epoch milliseconds. */

export interface ImageAsset {
  preview_1x: string;
  web_2x: string;
  full_3x: string;
}

export interface Neighborhood {
  id: string;
  name: string;
  region: string;
  timeZone: string;
  city: string;
  state: string;
  country: string;
  latitude: number;
  longitude: number;
}

export interface RestaurantRecord {
  index: number;
  id: string;
  name: string;
  cuisine: string[];
  cohort: 'qsr' | 'fsr';
  price: number;
  tags: { id: string; object: 'tag'; name: string }[];
  asset: ImageAsset;
  websiteUrl: string;
  instagramUrl: string | null;
  createdAtMs: number;
  updatedAtMs: number;
  removed: boolean;
}

export interface OpenHoursPeriod {
  day_of_week: number; // 0 = Sunday
  opens_at: string; // HH:MM local time
  closes_at: string; // HH:MM local time; earlier than opens_at when the period crosses midnight
}

export interface LocationRecord {
  index: number;
  id: string;
  restaurantIndex: number;
  neighborhoodIndex: number;
  name: string;
  slug: string;
  address: { street: string; street2: string; city: string; state: string; zipcode: string; country: string };
  coordinate: { latitude: number; longitude: number };
  phoneNumber: string;
  timeZone: string;
  paymentsEnabled: boolean;
  isClub: boolean;
  reservationUrl: string | null;
  reservationsEnabled: boolean;
  googlePlaceId: string | null;
  openHours: OpenHoursPeriod[];
  createdAtMs: number;
  updatedAtMs: number;
  removed: boolean;
}

export type ChallengeType = 'PAYMENT' | 'REFERRALS' | 'DINES' | 'PASSPORT';

export interface ChallengeRecord {
  id: string;
  restaurantId: string;
  /** null = applies to every location of the restaurant. */
  locationIds: string[] | null;
  type: ChallengeType;
  title: string;
  description: string;
  image: string | null;
  threshold: Record<string, unknown>;
  tokenReward: { value: string; currency: string };
  startTimeMs: number | null;
  endTimeMs: number | null;
  terms: string[];
  acceptedCurrencies: string[];
  createdAtMs: number;
  updatedAtMs: number;
}

export interface WalletRecord {
  id: string;
  ownerId: string;
  type: 'MEMBERSHIP' | 'SPENDING';
  address: string;
  balance: bigint;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface StatusRecord {
  id: string;
  tier: string;
  level: number;
  track: 'regular' | 'pro';
  tokenMultiplier: number;
  state: 'active' | 'expired' | 'replaced' | 'deactivated';
  benefits: { title: string; description: string }[];
  progress: {
    checkIns: number;
    checkInThreshold: number;
    spendCents: number;
    spendThresholdCents: number;
    tokenDeposit: bigint;
    tokenDepositThreshold: bigint;
  };
  yearStartMs: number;
  yearEndMs: number;
  startedAtMs: number;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface MemberCheckIn {
  id: string;
  locationIndex: number;
  svcPayEnabled: boolean;
  createdAtMs: number;
  endedAtMs: number | null;
}

export interface MemberRecord {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  phoneNumber: string | null;
  birthdate: string | null;
  zipcode: string | null;
  avatar: string | null;
  accountStatus:
    'ok' | 'suspended' | 'payment_disputed' | 'payment_failed' | 'unpaid_check' | 'negative_balance';
  createdAtMs: number;
  updatedAtMs: number;
  wallets: WalletRecord[];
  tags: {
    type: string;
    metadata: { key: string; value: string[] }[];
    createdAtMs: number;
    updatedAtMs: number;
  }[];
  statuses: StatusRecord[];
  /** Newest first. */
  checkIns: MemberCheckIn[];
  /** Location indexes where most of the member's visits happen (simulator-only, never served). */
  favouriteLocations: number[];
}

export interface IntentRecord {
  id: string;
  payerWalletId: string;
  payeeWalletId: string;
  amount: bigint;
  currency: string;
  description: string;
  metadata: Record<string, string>;
  expiresAtMs: number | null;
  canceledAtMs: number | null;
  paidAtMs: number | null;
  refundedAtMs: number | null;
  createdAtMs: number;
  updatedAtMs: number;
  idempotencyKey: string | null;
}

export interface AppRecord {
  merchantId: string;
  wallet: { id: string; balance: bigint; currency: string };
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  allowedScopes: string[];
}

export interface World {
  seed: number;
  anchorMs: number;
  days: number;
  /** How visits spread over a local day. */
  rhythm: Rhythm;
  neighborhoods: Neighborhood[];
  restaurants: RestaurantRecord[];
  locations: LocationRecord[];
  challenges: ChallengeRecord[];
  members: MemberRecord[];
  /** Insertion order = creation order. */
  intents: Map<string, IntentRecord>;
  app: AppRecord;
  checkIns: CheckInStore;
  checkInIds: CheckInIdCodec;
  /** seqs of visits with ended_at null. */
  ongoing: Set<number>;
  /** Lookups by id; records are added and removed through world-index.ts so it stays in step. */
  index: WorldIndex;
  /** When each record last changed: every mutation records itself here. */
  truth: TruthLog;
  /** Changes due at a known simulated time; applied when the clock reaches them. */
  timeline: Timeline;
}

/** A restaurant still listed (not removed). */
export function findRestaurant(world: World, id: string): RestaurantRecord | undefined {
  const restaurant = world.index.restaurantById.get(id);
  return restaurant && !restaurant.removed ? restaurant : undefined;
}

/** A location still served (not removed). */
export function findLocation(world: World, id: string): LocationRecord | undefined {
  const location = world.index.locationById.get(id);
  return location && !location.removed ? location : undefined;
}

export function findMember(world: World, id: string): MemberRecord | undefined {
  return world.index.memberById.get(id);
}

export function findWallet(world: World, walletId: string): WalletRecord | undefined {
  return world.index.walletById.get(walletId)?.wallet;
}

export function walletOwner(world: World, walletId: string): MemberRecord | undefined {
  return world.index.walletById.get(walletId)?.owner;
}
