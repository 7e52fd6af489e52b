import { z } from 'zod';
import { recordParser, type RecordParser } from './parse.js';
import {
  compact,
  countSchema,
  currencySchema,
  decimalMoneySchema,
  isoTimestampSchema,
  nullableIsoTimestampSchema,
  uuidSchema,
  type DecimalMoney,
} from './primitives.js';

export const KNOWN_CHALLENGE_TYPES = ['PAYMENT', 'REFERRALS', 'DINES', 'PASSPORT'] as const;
export type KnownChallengeType = (typeof KNOWN_CHALLENGE_TYPES)[number];

export function isKnownChallengeType(type: string): type is KnownChallengeType {
  return (KNOWN_CHALLENGE_TYPES as readonly string[]).includes(type);
}

/**
 * Completion targets. Which fields are set depends on the challenge type; the spec shows these
 * four, and PASSPORT's are unknown, so any other field is kept verbatim in `extra`.
 * A typed field may be null when the API sends null for a target that does not apply.
 */
export interface ChallengeThreshold {
  spendThreshold?: DecimalMoney | null;
  minimumSpend?: DecimalMoney | null;
  dineThreshold?: number | null;
  referralThreshold?: number | null;
  /** Threshold fields outside the four above, as received (snake_case keys). */
  extra: Record<string, unknown>;
}

export interface Challenge {
  /** Lower-case UUID. The challenge carries no restaurant: the caller knows it from the query. */
  id: string;
  /** `PAYMENT`, `REFERRALS`, `DINES`, `PASSPORT`, or a type this code does not know yet (kept). */
  type: string;
  title: string;
  description: string;
  image: string | null;
  threshold: ChallengeThreshold;
  tokenReward: DecimalMoney;
  startTime: Date | null;
  endTime: Date | null;
  terms: string[];
  /** Lower-case currency codes. */
  acceptedCurrencies: string[];
  createdAt: Date;
  updatedAt: Date;
  /** The record as received. */
  raw: unknown;
}

const TYPED_THRESHOLD_KEYS = ['spend_threshold', 'minimum_spend', 'dine_threshold', 'referral_threshold'];

const thresholdSchema = z.looseObject({
  spend_threshold: decimalMoneySchema.nullable().optional(),
  minimum_spend: decimalMoneySchema.nullable().optional(),
  dine_threshold: countSchema.nullable().optional(),
  referral_threshold: countSchema.nullable().optional(),
});

const challengeSchema = z.object({
  id: uuidSchema,
  object: z.literal('challenge'),
  // Unknown types are kept: a new campaign kind must not make the whole snapshot reject it.
  type: z.string().min(1),
  title: z.string(),
  description: z.string(),
  image: z.string().nullable(),
  threshold: thresholdSchema,
  token_reward: decimalMoneySchema,
  start_time: nullableIsoTimestampSchema,
  end_time: nullableIsoTimestampSchema,
  terms: z.array(z.string()),
  accepted_currencies: z.array(currencySchema),
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
});

function toThreshold(wire: z.output<typeof thresholdSchema>): ChallengeThreshold {
  // fromEntries defines own properties, so even a key named `__proto__` is kept as data.
  const extra = Object.fromEntries(
    Object.entries(wire).filter(([key]) => !TYPED_THRESHOLD_KEYS.includes(key)),
  );
  return {
    ...compact({
      spendThreshold: wire.spend_threshold,
      minimumSpend: wire.minimum_spend,
      dineThreshold: wire.dine_threshold,
      referralThreshold: wire.referral_threshold,
    }),
    extra,
  };
}

/** Items of `GET /challenges`. */
export const parseChallenge: RecordParser<Challenge> = recordParser(challengeSchema, (w, raw) => ({
  id: w.id,
  type: w.type,
  title: w.title,
  description: w.description,
  image: w.image,
  threshold: toThreshold(w.threshold),
  tokenReward: w.token_reward,
  startTime: w.start_time,
  endTime: w.end_time,
  terms: w.terms,
  acceptedCurrencies: w.accepted_currencies,
  createdAt: w.created_at,
  updatedAt: w.updated_at,
  raw,
}));

/**
 * The threshold as JSON for `challenges.threshold jsonb`: API key names, amounts as exact digit
 * strings, currencies lower-case, unknown fields as received.
 */
export function challengeThresholdToJson(threshold: ChallengeThreshold): Record<string, unknown> {
  return {
    ...threshold.extra,
    ...compact({
      spend_threshold: threshold.spendThreshold,
      minimum_spend: threshold.minimumSpend,
      dine_threshold: threshold.dineThreshold,
      referral_threshold: threshold.referralThreshold,
    }),
  };
}
