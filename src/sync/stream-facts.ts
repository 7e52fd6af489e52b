/**
 * The streams of docs/contract.md and the facts every layer needs about them, written once: how
 * often the worker runs each (its setting and default), how it is scheduled, and what it reads
 * from the partner API (routes, credential, its place in the one budget). Plain data, at the
 * bottom of src/ beside the pure logic, so that the env schema (src/config/), the API client's
 * credential routing (src/api/) and the budget (budget-allocation.ts) derive their lists from it;
 * the stream registry (src/streams/registry.ts) adds what needs code: the pass, its follow-ups,
 * its re-sync.
 */

/** The streams by name, in the order `run all` takes them. */
export const STREAM_NAMES = [
  'restaurants',
  'checkins',
  'locations',
  'challenges',
  'balance',
  'payment_intents',
  'alerts',
  'members',
] as const;

export type StreamName = (typeof STREAM_NAMES)[number];

export function isStreamName(name: string): name is StreamName {
  return (STREAM_NAMES as readonly string[]).includes(name);
}

/** Each stream's name as a constant (`STREAM_NAME.checkins`), for the modules that name their own stream. */
export const STREAM_NAME: { readonly [K in StreamName]: K } = Object.freeze(
  Object.fromEntries(STREAM_NAMES.map((name) => [name, name])) as { [K in StreamName]: K },
);

/** The budget settings a share may name (Config: `intents.pollShare`, `members.syncShare`). */
export interface ShareSettings {
  /** INTENT_POLL_SHARE. */
  intentPollShare: number;
  /** MEMBER_SYNC_SHARE. */
  memberSyncShare: number;
}

export interface StreamFacts {
  /** How often the worker runs the stream: its setting, its default, its key in `Config.schedules`. */
  schedule: { setting: string; defaultMs: number; configKey: string };
  /**
   * The worker job that schedules it (jobs/): `stream-pass` runs the whole pass every interval;
   * the check-in feed has a planner of its own (`checkins-plan`, then one job per window).
   */
  scheduledBy: 'stream-pass' | 'checkins-plan';
  /** What it reads from the partner API; null for a stream that reads nothing from it (alerts). */
  reads: {
    /** The credential its routes carry; `bearer` streams need OAuth configured. */
    credential: 'api-key' | 'bearer';
    /** The path prefixes of its routes: their requests are counted against this stream's budget. */
    routes: readonly string[];
    /**
     * Its place in the one budget (docs/rate-limit.md, "One budget"): lower `priority` is served
     * first; `share` is the floor of the limit it keeps while it has work, a fraction or the
     * setting that gives it.
     */
    budget: { priority: number; share: number | keyof ShareSettings };
  } | null;
}

/** The facts of every stream (the type requires an entry per name). */
export const STREAM_FACTS = {
  restaurants: {
    schedule: { setting: 'RESTAURANTS_EVERY', defaultMs: 3_600_000, configKey: 'restaurantsMs' },
    scheduledBy: 'stream-pass',
    reads: { credential: 'api-key', routes: ['/restaurants'], budget: { priority: 6, share: 0 } },
  },
  checkins: {
    schedule: { setting: 'CHECKINS_EVERY', defaultMs: 30_000, configKey: 'checkinsMs' },
    scheduledBy: 'checkins-plan',
    // The feed's forward paging comes first: it is what keeps the warehouse current.
    reads: { credential: 'api-key', routes: ['/check_ins'], budget: { priority: 1, share: 0 } },
  },
  locations: {
    schedule: { setting: 'LOCATIONS_EVERY', defaultMs: 3_600_000, configKey: 'locationsMs' },
    scheduledBy: 'stream-pass',
    // The locations pass plans its refreshes within a quarter of the limit (locationRefreshBudget).
    reads: { credential: 'api-key', routes: ['/locations'], budget: { priority: 5, share: 0.25 } },
  },
  challenges: {
    schedule: { setting: 'CHALLENGES_EVERY', defaultMs: 3_600_000, configKey: 'challengesMs' },
    scheduledBy: 'stream-pass',
    reads: { credential: 'api-key', routes: ['/challenges'], budget: { priority: 7, share: 0 } },
  },
  balance: {
    schedule: { setting: 'BALANCE_EVERY', defaultMs: 300_000, configKey: 'balanceMs' },
    scheduledBy: 'stream-pass',
    reads: { credential: 'api-key', routes: ['/balance'], budget: { priority: 8, share: 0 } },
  },
  payment_intents: {
    schedule: { setting: 'PAYMENT_INTENTS_EVERY', defaultMs: 5_000, configKey: 'paymentIntentsMs' },
    scheduledBy: 'stream-pass',
    // Its by-id reads raise the paid alerts: served right after the feed.
    reads: {
      credential: 'bearer',
      routes: ['/payment_intents'],
      budget: { priority: 2, share: 'intentPollShare' },
    },
  },
  alerts: {
    schedule: { setting: 'ALERTS_EVERY', defaultMs: 2_000, configKey: 'alertsMs' },
    scheduledBy: 'stream-pass',
    reads: null,
  },
  members: {
    schedule: { setting: 'MEMBERS_EVERY', defaultMs: 900_000, configKey: 'membersMs' },
    scheduledBy: 'stream-pass',
    // Each connected member's visits, read with their own token (token refreshes counted here too).
    reads: {
      credential: 'bearer',
      routes: ['/users/me'],
      budget: { priority: 4, share: 'memberSyncShare' },
    },
  },
} as const satisfies Record<StreamName, StreamFacts>;

type Facts = typeof STREAM_FACTS;

/** The streams that read the partner API (all but alerts). */
export type ApiStream = { [K in StreamName]: Facts[K]['reads'] extends null ? never : K }[StreamName];

/** A stream's interval setting (`RESTAURANTS_EVERY`, …). */
export type ScheduleSetting = Facts[StreamName]['schedule']['setting'];

/** `Config.schedules`: each stream's interval in ms, under its `configKey`. */
export type StreamSchedules = { [K in StreamName as Facts[K]['schedule']['configKey']]: number };

/** The facts of a stream that reads the partner API, or null (alerts). */
export function readsOf(stream: StreamName): StreamFacts['reads'] {
  return STREAM_FACTS[stream].reads;
}

/** The streams that read the partner API, in registry order. */
export const API_STREAMS: readonly ApiStream[] = STREAM_NAMES.filter(
  (stream): stream is ApiStream => STREAM_FACTS[stream].reads !== null,
);

/** Whether a stream reads with the OAuth user token (it cannot run without OAuth configured). */
export function readsWithOAuth(stream: StreamName): boolean {
  return readsOf(stream)?.credential === 'bearer';
}
