import type { PartnerApi } from '../api/partner-api.js';
import type { Config, OAuthConfig } from '../config/config.js';
import {
  STREAM_FACTS,
  STREAM_NAMES,
  readsWithOAuth,
  type StreamFacts,
  type StreamName,
} from '../sync/stream-facts.js';
import {
  oauthSettingsOf,
  type FollowUpSignals,
  type PassOutcome,
  type ResyncDefinition,
  type StreamDeps,
} from './stream.js';

/** How a pass was started. */
export interface PassContext {
  /**
   * Time until the worker's next scheduled pass of this stream: a pass may keep working that long
   * (payment intents tick while intents are open). Absent for `run` and catch-ups: one round.
   */
  slotMs?: number;
}

/** One full pass of a stream. */
export type Pass = (deps: StreamDeps<PartnerApi>, context?: PassContext) => Promise<PassOutcome>;

/** A pass worth running right after another one, and what in the first pass's signals calls for it. */
export interface FollowUp<Name extends string> {
  stream: Name;
  when(signals: FollowUpSignals): boolean;
}

/**
 * Everything the service knows about a stream, in one place: its facts (src/sync/stream-facts.ts:
 * schedule, routes, credential, budget) and the code run for it. Its name is its key in STREAMS;
 * the job queue, `run`, `resync`, `status` and the worker's schedules are all computed from these
 * records.
 */
export interface StreamDefinition<Name extends string = string> {
  /**
   * The pass itself, loaded on first use: the CLI reads this registry for names and schedules
   * without loading the database and API layers a pass needs.
   */
  loadPass(): Promise<Pass>;
  /** How often the worker runs the stream (its `schedule` setting; status shows it as the interval). */
  everyMs(config: Config): number;
  /**
   * Reads with the OAuth user token (its routes' credential is `bearer`): skipped (worker, `run
   * all`) or refused (`run <stream>`) without OAuth.
   */
  needsOAuth: boolean;
  /** Passes the worker enqueues at once after this one, instead of leaving them for their next tick. */
  followUps: ReadonlyArray<FollowUp<Name>>;
  /** The worker job that schedules the stream (its facts' `scheduledBy`). */
  scheduledBy: StreamFacts['scheduledBy'];
  /**
   * How `resync` re-reads it (src/streams/resync.ts); `unsupported`, with the reason, for a stream
   * that reads nothing from the partner API.
   */
  resync: ResyncDefinition<PartnerApi> | { unsupported: string };
}

/** A pass whose tuning argument keeps its defaults when the worker or `run` calls it. */
const withDefaults =
  (run: (deps: StreamDeps<PartnerApi>) => Promise<PassOutcome>): Pass =>
  (deps) =>
    run(deps);

/** A stream's definition: its facts (stream-facts.ts) and its code; no follow-ups unless given. */
function define<Name extends StreamName>(
  stream: Name,
  code: Pick<StreamDefinition<StreamName>, 'loadPass' | 'resync'> & {
    followUps?: StreamDefinition<StreamName>['followUps'];
  },
): StreamDefinition<StreamName> {
  const facts = STREAM_FACTS[stream];
  return {
    loadPass: code.loadPass,
    resync: code.resync,
    followUps: code.followUps ?? [],
    everyMs: (config) => config.schedules[facts.schedule.configKey],
    needsOAuth: readsWithOAuth(stream),
    scheduledBy: facts.scheduledBy,
  };
}

/**
 * The streams of docs/contract.md, one entry per name of STREAM_NAMES (src/sync/stream-facts.ts:
 * the order `run all` takes them). Adding a stream is its name and facts there and one entry here.
 */
export const STREAMS: Readonly<Record<StreamName, StreamDefinition<StreamName>>> = {
  restaurants: define('restaurants', {
    loadPass: async () => withDefaults((await import('./restaurants.js')).runRestaurantsPass),
    // New restaurants have challenges to read: do not leave them for the next hourly tick.
    followUps: [{ stream: 'challenges', when: (signals) => (signals.newRestaurants ?? 0) > 0 }],
    resync: {
      usesRange: false,
      what: 'the whole list, every version compared by content (stored hashes recomputed)',
      load: async () => {
        const { runRestaurantsPass } = await import('./restaurants.js');
        return (deps) => runRestaurantsPass(deps, { recheckStoredVersions: true });
      },
    },
  }),
  checkins: define('checkins', {
    loadPass: async () => withDefaults((await import('./checkins/pass.js')).runCheckinsPass),
    // The feed brings new locations: their full form and open hours should not wait for the
    // locations stream's next pass.
    followUps: [{ stream: 'locations', when: (signals) => (signals.locationsNeverRefreshed ?? 0) > 0 }],
    resync: {
      usesRange: true,
      what: 'every window of the range re-paged from its first page, whatever its state',
      load: async () => {
        const { resyncCheckins } = await import('./checkins/resync.js');
        return (deps, options) =>
          resyncCheckins(deps, {
            range: options.range,
            wait: options.wait,
            progress: options.progress,
            ...(options.retryMs === undefined ? {} : { lockedRetryMs: options.retryMs }),
          });
      },
    },
  }),
  locations: define('locations', {
    loadPass: async () => withDefaults((await import('./locations.js')).runLocationsPass),
    resync: {
      usesRange: false,
      what: 'the full form and open hours of every known location, not only those due within the budget',
      load: async () => {
        const { runLocationsPass } = await import('./locations.js');
        const { countLocations } = await import('../warehouse/locations.js');
        return async (deps, options) => {
          const { total } = await countLocations(deps.db);
          options.progress?.({ done: 0, total, unit: 'locations' });
          return runLocationsPass(deps, { everyRecord: true });
        };
      },
    },
  }),
  challenges: define('challenges', {
    loadPass: async () => withDefaults((await import('./challenges.js')).runChallengesPass),
    resync: {
      usesRange: false,
      what: "every live restaurant's challenge list, every version compared by content (stored hashes recomputed)",
      load: async () => {
        const { runChallengesPass } = await import('./challenges.js');
        return (deps) => runChallengesPass(deps, { recheckStoredVersions: true, everyRecord: true });
      },
    },
  }),
  balance: define('balance', {
    loadPass: async () => (await import('./balance.js')).runBalancePass,
    resync: {
      usesRange: false,
      what: 'one read of the app wallet balance (it has no short-cut to ignore)',
      load: async () => (await import('./balance.js')).runBalancePass,
    },
  }),
  payment_intents: define('payment_intents', {
    loadPass: async () => {
      const { runPaymentIntentsPass } = await import('./payment-intents/pass.js');
      return (deps, context) => runPaymentIntentsPass(deps, context ?? {});
    },
    resync: {
      usesRange: true,
      what: 'the full form of every stored intent created in the range, changes through the transition ledger',
      load: async () => (await import('./payment-intents/resync.js')).resyncPaymentIntents,
    },
  }),
  alerts: define('alerts', {
    loadPass: async () => withDefaults((await import('../alerts/delivery.js')).runAlertsPass),
    resync: {
      unsupported:
        'alerts reads nothing from the partner API (undelivered alerts are retried by the alerts pass); nothing to re-sync',
    },
  }),
  members: define('members', {
    // Each connected member brings their own tokens; the OAuth client and key must be configured.
    loadPass: async () => withDefaults((await import('./members.js')).runMembersPass),
    resync: {
      usesRange: false,
      what: "every active connection, each member's visits read from the top to the last page",
      load: async () => {
        const { runMembersPass } = await import('./members.js');
        return (deps) => runMembersPass(deps, { fromTheTop: true });
      },
    },
  }),
};

/** Whether the configuration lets this stream run at all (an OAuth stream needs OAuth). */
export function streamEnabled(config: Pick<Config, 'oauth'>, stream: StreamName): boolean {
  return !STREAMS[stream].needsOAuth || config.oauth !== undefined;
}

/** The streams that read with OAuth tokens (payment intents, members), in registry order. */
export const OAUTH_STREAMS = STREAM_NAMES.filter((stream) => STREAMS[stream].needsOAuth);

/**
 * The OAuth settings of a stream the registry marks `needsOAuth`: the worker and `run` never start
 * such a pass without them (streamEnabled), so their absence here is a programming error.
 */
export function oauthOf(config: Pick<Config, 'oauth'>, stream: StreamName): OAuthConfig {
  if (!STREAMS[stream].needsOAuth) throw new Error(`${stream} does not read with OAuth`);
  return oauthSettingsOf(config, stream);
}

/** The passes to run right after a pass that gave these signals (those the configuration lets run). */
export function followUpsOf(
  config: Pick<Config, 'oauth'>,
  stream: StreamName,
  signals: FollowUpSignals | undefined,
): StreamName[] {
  const followUps: ReadonlyArray<FollowUp<StreamName>> = STREAMS[stream].followUps;
  return followUps
    .filter((followUp) => followUp.when(signals ?? {}) && streamEnabled(config, followUp.stream))
    .map((followUp) => followUp.stream);
}
