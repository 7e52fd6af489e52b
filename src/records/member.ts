import { z } from 'zod';
import { recordParser, type RecordParser } from './parse.js';
import {
  calendarDateSchema,
  centsMoneySchema,
  compact,
  countSchema,
  decimalMoneySchema,
  epochSecondsSchema,
  imageAssetSchema,
  isoTimestampSchema,
  nullableIsoTimestampSchema,
  uuidSchema,
  type CentsMoney,
  type DecimalMoney,
  type ImageAsset,
} from './primitives.js';

// Member routes (`/users/me/*`), stored by the members stream (src/streams/members.ts). Enums the
// spec lists exhaustively are strict, but for `account_status`: a value the spec does not list is
// kept as given (a drift the pass reports) rather than losing the member's whole profile. Open
// strings stay open. Reasons never quote a received value (MEMBER_REASONS): they reach `status`.

const MEMBER_REASONS = { reasonValues: 'type-only' } as const;

// ---------------------------------------------------------------------------------------------
// user

export const ACCOUNT_STATUSES = [
  'ok',
  'suspended',
  'payment_disputed',
  'payment_failed',
  'unpaid_check',
  'negative_balance',
] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

export interface User {
  /** Lower-case UUID; equals the access token's `sub`. */
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  /** E.164. */
  phoneNumber: string | null;
  /** `YYYY-MM-DD`, kept as a calendar date string. */
  birthdate: string | null;
  zipcode: string | null;
  avatar: string | null;
  /** As given: one of ACCOUNT_STATUSES, or a value the spec does not list (see accountStatusListed). */
  accountStatus: string;
  /** False when `accountStatus` is not among ACCOUNT_STATUSES: a drift of the API to report. */
  accountStatusListed: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** The record as received. */
  raw: unknown;
}

const userSchema = z.object({
  id: uuidSchema,
  object: z.literal('user'),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  phone_number: z.string().nullable(),
  birthdate: calendarDateSchema.nullable(),
  zipcode: z.string().nullable(),
  avatar: z.string().nullable(),
  account_status: z.string().min(1),
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
});

/** `GET /users/me`. */
export const parseUser: RecordParser<User> = recordParser(
  userSchema,
  (w, raw) => ({
    id: w.id,
    firstName: w.first_name,
    lastName: w.last_name,
    email: w.email,
    phoneNumber: w.phone_number,
    birthdate: w.birthdate,
    zipcode: w.zipcode,
    avatar: w.avatar,
    accountStatus: w.account_status,
    accountStatusListed: isListedAccountStatus(w.account_status),
    createdAt: w.created_at,
    updatedAt: w.updated_at,
    raw,
  }),
  MEMBER_REASONS,
);

export function isListedAccountStatus(value: string): value is AccountStatus {
  return (ACCOUNT_STATUSES as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------
// status

export const STATUS_STATES = ['active', 'expired', 'replaced', 'deactivated'] as const;
export type StatusState = (typeof STATUS_STATES)[number];
export const STATUS_TRACKS = ['regular', 'pro'] as const;
export type StatusTrack = (typeof STATUS_TRACKS)[number];

export interface StatusProgress {
  checkIns: number;
  checkInThreshold: number;
  /** Integer cents. */
  spend: CentsMoney;
  spendThreshold: CentsMoney;
  /** Smallest-unit big-integer strings. */
  tokenDeposit: DecimalMoney;
  tokenDepositThreshold: DecimalMoney;
}

export interface MemberStatus {
  id: string;
  /** Member id (token `sub`). */
  userId: string;
  /** Display string; may contain a newline. */
  tier: string;
  /** 1 to 7. */
  level: number;
  track: StatusTrack;
  tokenMultiplier: number;
  state: StatusState;
  benefits: { title: string; description: string }[];
  progress: StatusProgress;
  /** From epoch seconds. */
  yearStart: Date;
  yearEnd: Date;
  startedAt: Date;
  createdAt: Date;
  updatedAt: Date;
  raw: unknown;
}

const statusSchema = z.object({
  id: uuidSchema,
  object: z.literal('status'),
  user: uuidSchema,
  tier: z.string(),
  level: z.int().min(1).max(7),
  track: z.enum(STATUS_TRACKS),
  token_multiplier: z.int(),
  state: z.enum(STATUS_STATES),
  benefits: z.array(z.object({ title: z.string(), description: z.string() })),
  progress: z.object({
    check_ins: countSchema,
    check_in_threshold: countSchema,
    spend: centsMoneySchema,
    spend_threshold: centsMoneySchema,
    token_deposit: decimalMoneySchema,
    token_deposit_threshold: decimalMoneySchema,
  }),
  year_start: epochSecondsSchema,
  year_end: epochSecondsSchema,
  started_at: isoTimestampSchema,
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
});

/**
 * The progress object under the partner API's own field names, as `member_statuses.progress` keeps
 * it: an analyst reading the API's documentation writes `progress->'token_deposit'->>'value'`.
 * Values as validated (cents as integers, big-integer amounts as strings, currencies lower-case). Pure.
 */
export function progressInApiNames(progress: StatusProgress): Record<string, unknown> {
  return {
    check_ins: progress.checkIns,
    check_in_threshold: progress.checkInThreshold,
    spend: progress.spend,
    spend_threshold: progress.spendThreshold,
    token_deposit: progress.tokenDeposit,
    token_deposit_threshold: progress.tokenDepositThreshold,
  };
}

/** `GET /users/me/status`. */
export const parseMemberStatus: RecordParser<MemberStatus> = recordParser(
  statusSchema,
  (w, raw) => ({
    id: w.id,
    userId: w.user,
    tier: w.tier,
    level: w.level,
    track: w.track,
    tokenMultiplier: w.token_multiplier,
    state: w.state,
    benefits: w.benefits.map(({ title, description }) => ({ title, description })),
    progress: {
      checkIns: w.progress.check_ins,
      checkInThreshold: w.progress.check_in_threshold,
      spend: w.progress.spend,
      spendThreshold: w.progress.spend_threshold,
      tokenDeposit: w.progress.token_deposit,
      tokenDepositThreshold: w.progress.token_deposit_threshold,
    },
    yearStart: w.year_start,
    yearEnd: w.year_end,
    startedAt: w.started_at,
    createdAt: w.created_at,
    updatedAt: w.updated_at,
    raw,
  }),
  MEMBER_REASONS,
);

// ---------------------------------------------------------------------------------------------
// user_wallet

export const WALLET_TYPES = ['MEMBERSHIP', 'SPENDING'] as const;
export type WalletType = (typeof WALLET_TYPES)[number];

export interface UserWallet {
  id: string;
  walletType: WalletType;
  address: string;
  createdAt: Date;
  updatedAt: Date;
  /** Its fields the parser does not know (docs/schema-drift.md); null or absent when none. */
  extra?: Record<string, unknown> | null;
}

const walletSchema = z.object({
  id: uuidSchema,
  object: z.literal('user_wallet'),
  wallet_type: z.enum(WALLET_TYPES),
  address: z.string(),
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
});

/** Items of `GET /users/me/wallets`. */
export const parseUserWallet: RecordParser<UserWallet> = recordParser(
  walletSchema,
  (w, _raw, extra) => ({
    id: w.id,
    walletType: w.wallet_type,
    address: w.address,
    createdAt: w.created_at,
    updatedAt: w.updated_at,
    extra,
  }),
  MEMBER_REASONS,
);

// ---------------------------------------------------------------------------------------------
// user_tag

export interface UserTag {
  /** The spec shows no id on tags; kept when present. */
  id?: string;
  /** Lower-case enum, currently `industry`; open so new tag types are not rejected. Match exactly. */
  type: string;
  metadata: { key: string; value: string[] }[];
  createdAt: Date;
  updatedAt: Date;
  /** Its fields the parser does not know (docs/schema-drift.md); null or absent when none. */
  extra?: Record<string, unknown> | null;
}

const userTagSchema = z.object({
  id: uuidSchema.optional(),
  object: z.literal('user_tag'),
  type: z.string(),
  metadata: z.array(z.object({ key: z.string(), value: z.array(z.string()) })),
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
});

/** Items of `GET /users/me/tags`. */
export const parseUserTag: RecordParser<UserTag> = recordParser(
  userTagSchema,
  (w, _raw, extra) => ({
    ...compact({ id: w.id }),
    type: w.type,
    metadata: w.metadata.map(({ key, value }) => ({ key, value })),
    createdAt: w.created_at,
    updatedAt: w.updated_at,
    extra,
  }),
  MEMBER_REASONS,
);

// ---------------------------------------------------------------------------------------------
// membership

export interface MembershipTier {
  id: string;
  /** Open string (Member, VIP, Friend, …). */
  name: string;
  artist: string;
  asset: ImageAsset;
}

export interface Membership {
  id: string;
  restaurantId: string;
  checkInCount: number;
  lastCheckInDate: Date | null;
  membershipTier: MembershipTier;
  raw: unknown;
}

const membershipSchema = z.object({
  id: uuidSchema,
  object: z.literal('membership'),
  restaurant_id: uuidSchema,
  check_in_count: countSchema,
  last_check_in_date: nullableIsoTimestampSchema,
  membership_tier: z.object({
    id: uuidSchema,
    object: z.literal('membership_tier'),
    name: z.string(),
    artist: z.string(),
    asset: imageAssetSchema,
  }),
});

/** Items of `GET /users/me/memberships`. */
export const parseMembership: RecordParser<Membership> = recordParser(
  membershipSchema,
  (w, raw) => ({
    id: w.id,
    restaurantId: w.restaurant_id,
    checkInCount: w.check_in_count,
    lastCheckInDate: w.last_check_in_date,
    membershipTier: {
      id: w.membership_tier.id,
      name: w.membership_tier.name,
      artist: w.membership_tier.artist,
      asset: w.membership_tier.asset,
    },
    raw,
  }),
  MEMBER_REASONS,
);
