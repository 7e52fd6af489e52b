import { createPrng, type Prng } from './prng.js';
import type { SchemaChange } from './schema-faults.js';

/** Fault injection: rate limit, 5xx, latency, truncation, malformed records, page shifting. */

export interface FaultSettings {
  /** Requests per second allowed per credential; null = unlimited. */
  rateLimitRps: number | null;
  /** Fraction in [0, 1] of /v1 requests answered with a 5xx and an HTML body. */
  serverErrorRate: number;
  /** Added delay before every /v1 answer. */
  latencyMs: number;
  /** The next N JSON 200 answers are cut in half. */
  truncateNext: number;
  /** The next N check-in feed pages carry malformed records. */
  malformedNext: number;
  /** On the next /check_ins request for page >= 1, first insert this many newer rows inside its range. */
  shiftNextPageBy: number;
  /**
   * Paging that never ends, on every paginated list: `empty-pages` answers next_page = page + 1
   * forever (pages past the data are empty); `same-page` ignores `page` and serves the first
   * page again and again, still saying next_page = page + 1.
   */
  endlessPaging: 'empty-pages' | 'same-page' | null;
  /** `pagination.page_size` as answered: `zero` says 0, `absent` leaves the field out. */
  pageSizeAnswer: 'zero' | 'absent' | null;
  /** The next N JSON 200 answers are followed by `oversizedBytes` of whitespace, streamed unannounced. */
  oversizedNext: number;
  oversizedBytes: number;
  /** The next N /check_ins list answers are empty (`check_ins: []`, total_count 0): a brief outage. */
  emptyFeedNext: number;
  /**
   * Check-in ids (lower case) whose feed form carries a value that is valid JSON but that
   * Postgres refuses; served until reset.
   */
  hostileCheckIns: Record<string, HostileValue>;
  /** Payment intent ids (lower case) whose full form (`GET /payment_intents/{id}`) fails validation. */
  malformedIntents: Record<string, MalformedIntentField>;
  /** Member ids (lower case) whose profile (`GET /users/me`) carries values the spec does not list. */
  hostileMembers: Record<string, HostileMemberProfile>;
  /** Schema drift: fields added, dropped or retyped in a resource's records (schema-faults.ts). */
  schemaChanges: SchemaChange[];
}

/**
 * `metadata`: a number among the metadata values. `paid_at`: not a timestamp. `status`: an unknown
 * status. `amount`: a fractional amount value. The list form stays valid.
 */
export const MALFORMED_INTENT_FIELDS = ['metadata', 'paid_at', 'status', 'amount'] as const;
export type MalformedIntentField = (typeof MALFORMED_INTENT_FIELDS)[number];

/**
 * `nul`: U+0000 in the location's name. `lone-surrogate`: an unpaired UTF-16 surrogate in it.
 * `year-0000`: `ended_at` in year 0000 (valid ISO 8601; Postgres has no year 0).
 * `int-overflow`: the embedded restaurant's `price` above 2^31 - 1 (an `integer` column).
 * `deep-json`: the embedded restaurant's free-form `tags` nested 10,000 deep.
 */
export const HOSTILE_VALUES = ['nul', 'lone-surrogate', 'year-0000', 'int-overflow', 'deep-json'] as const;
export type HostileValue = (typeof HOSTILE_VALUES)[number];

/**
 * `unlisted-account-status`: `account_status` is `"closed"`, a value the spec does not list.
 * `numeric-pii`: `zipcode` and `phone_number` are JSON numbers (10014, 5551234567), not strings.
 */
export const HOSTILE_MEMBER_PROFILES = ['unlisted-account-status', 'numeric-pii'] as const;
export type HostileMemberProfile = (typeof HOSTILE_MEMBER_PROFILES)[number];

export const NO_FAULTS: FaultSettings = {
  rateLimitRps: null,
  serverErrorRate: 0,
  latencyMs: 0,
  truncateNext: 0,
  malformedNext: 0,
  shiftNextPageBy: 0,
  endlessPaging: null,
  pageSizeAnswer: null,
  oversizedNext: 0,
  oversizedBytes: 200 * 1024 * 1024,
  emptyFeedNext: 0,
  hostileCheckIns: {},
  malformedIntents: {},
  hostileMembers: {},
  schemaChanges: [],
};

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class FaultInjector {
  private settings: FaultSettings = { ...NO_FAULTS };
  private readonly buckets = new Map<string, Bucket>();
  private readonly rng: Prng;

  constructor(
    seed: number,
    /** Real monotonic time: rate limits are about how fast a client really calls. */
    private readonly monotonicMs: () => number,
  ) {
    this.rng = createPrng(seed, 'faults');
  }

  get(): FaultSettings {
    return { ...this.settings };
  }

  set(patch: Partial<FaultSettings>): FaultSettings {
    this.settings = { ...this.settings, ...patch };
    if (patch.rateLimitRps !== undefined) this.buckets.clear();
    return this.get();
  }

  reset(): void {
    this.settings = { ...NO_FAULTS };
    this.buckets.clear();
  }

  /** Token bucket per credential; returns seconds to wait (Retry-After) or null when allowed. */
  rateLimit(credentialKey: string): number | null {
    const rps = this.settings.rateLimitRps;
    if (rps === null || rps <= 0) return null;
    const now = this.monotonicMs();
    const bucket = this.buckets.get(credentialKey) ?? { tokens: rps, updatedMs: now };
    bucket.tokens = Math.min(rps, bucket.tokens + ((now - bucket.updatedMs) / 1000) * rps);
    bucket.updatedMs = now;
    this.buckets.set(credentialKey, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / rps));
  }

  /** A 5xx status to answer with, or null. */
  serverError(): number | null {
    const rate = this.settings.serverErrorRate;
    if (rate <= 0 || this.rng.next() >= rate) return null;
    return this.rng.pick([500, 502, 503]);
  }

  latencyMs(): number {
    return this.settings.latencyMs;
  }

  takeTruncation(): boolean {
    if (this.settings.truncateNext <= 0) return false;
    this.settings.truncateNext--;
    return true;
  }

  takeMalformed(): boolean {
    if (this.settings.malformedNext <= 0) return false;
    this.settings.malformedNext--;
    return true;
  }

  /** Bytes of padding for this answer, or 0. */
  takeOversize(): number {
    if (this.settings.oversizedNext <= 0) return 0;
    this.settings.oversizedNext--;
    return this.settings.oversizedBytes;
  }

  takeEmptyFeed(): boolean {
    if (this.settings.emptyFeedNext <= 0) return false;
    this.settings.emptyFeedNext--;
    return true;
  }

  hostileCheckIn(id: string): HostileValue | undefined {
    return this.settings.hostileCheckIns[id];
  }

  malformedIntent(id: string): MalformedIntentField | undefined {
    return this.settings.malformedIntents[id];
  }

  hostileMember(id: string): HostileMemberProfile | undefined {
    return this.settings.hostileMembers[id];
  }

  takePageShift(): number {
    const n = this.settings.shiftNextPageBy;
    this.settings.shiftNextPageBy = 0;
    return n;
  }
}
