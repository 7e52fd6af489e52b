import type { PartnerApi } from '../api/partner-api.js';
import type { Config, OAuthConfig } from '../config/config.js';
import { oauthSettingsOf, type FollowUpSignals, type PassOutcome, type StreamDeps } from './stream.js';
import { STREAM_NAMES, type StreamName } from './stream-names.js';

// The names are the bottom of src/streams/ (stream-names.ts); re-exported for the CLI and jobs/,
// which read them with the registry.
export { STREAM_NAMES, isStreamName, type StreamName } from './stream-names.js';

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
 * Everything the service knows about a stream, in one place. Its name is its key in STREAMS; the
 * job queue, `run`, `status` and the worker's schedules are all computed from these records.
 */
export interface StreamDefinition<Name extends string = string> {
  /**
   * The pass itself, loaded on first use: the CLI reads this registry for names and schedules
   * without loading the database and API layers a pass needs.
   */
  loadPass(): Promise<Pass>;
  /** How often the worker runs the stream (status shows it as the stream's interval). */
  everyMs(config: Config): number;
  /** Reads with the OAuth user token: skipped (worker, `run all`) or refused (`run <stream>`) without OAuth. */
  needsOAuth: boolean;
  /** Passes the worker enqueues at once after this one, instead of leaving them for their next tick. */
  followUps: ReadonlyArray<FollowUp<Name>>;
  /**
   * The worker job that schedules the stream (jobs/): `stream-pass` runs the whole pass every
   * `everyMs`; the check-in feed has a planner of its own (`checkins-plan`, then one job per window).
   */
  scheduledBy: 'stream-pass' | 'checkins-plan';
}

/** A pass whose tuning argument keeps its defaults when the worker or `run` calls it. */
const withDefaults =
  (run: (deps: StreamDeps<PartnerApi>) => Promise<PassOutcome>): Pass =>
  (deps) =>
    run(deps);

/** The common case: no OAuth, no follow-ups, one `stream-pass` job per tick. */
function wholePass(
  entry: Pick<StreamDefinition, 'loadPass' | 'everyMs'> & { needsOAuth?: boolean },
): StreamDefinition<never> {
  return { needsOAuth: false, followUps: [], scheduledBy: 'stream-pass', ...entry };
}

/**
 * The streams of docs/contract.md, one entry per name of STREAM_NAMES (stream-names.ts: the order
 * `run all` takes them). Adding a stream is its name there and one entry here.
 */
export const STREAMS: Readonly<Record<StreamName, StreamDefinition<StreamName>>> = {
  restaurants: {
    loadPass: async () => withDefaults((await import('./restaurants.js')).runRestaurantsPass),
    everyMs: (config) => config.schedules.restaurantsMs,
    needsOAuth: false,
    scheduledBy: 'stream-pass',
    // New restaurants have challenges to read: do not leave them for the next hourly tick.
    followUps: [{ stream: 'challenges', when: (signals) => (signals.newRestaurants ?? 0) > 0 }],
  },
  checkins: {
    loadPass: async () => withDefaults((await import('./checkins/pass.js')).runCheckinsPass),
    everyMs: (config) => config.schedules.checkinsMs,
    needsOAuth: false,
    scheduledBy: 'checkins-plan',
    // The feed brings new locations: their full form and open hours should not wait for the daily
    // locations tick.
    followUps: [{ stream: 'locations', when: (signals) => (signals.locationsNeverRefreshed ?? 0) > 0 }],
  },
  locations: wholePass({
    loadPass: async () => withDefaults((await import('./locations.js')).runLocationsPass),
    everyMs: (config) => config.schedules.locationsMs,
  }),
  challenges: wholePass({
    loadPass: async () => withDefaults((await import('./challenges.js')).runChallengesPass),
    everyMs: (config) => config.schedules.challengesMs,
  }),
  balance: wholePass({
    loadPass: async () => (await import('./balance.js')).runBalancePass,
    everyMs: (config) => config.schedules.balanceMs,
  }),
  payment_intents: wholePass({
    loadPass: async () => {
      const { runPaymentIntentsPass } = await import('./payment-intents/pass.js');
      return (deps, context) => runPaymentIntentsPass(deps, context ?? {});
    },
    everyMs: (config) => config.schedules.paymentIntentsMs,
    needsOAuth: true,
  }),
  alerts: wholePass({
    loadPass: async () => withDefaults((await import('../alerts/delivery.js')).runAlertsPass),
    everyMs: (config) => config.schedules.alertsMs,
  }),
  members: wholePass({
    loadPass: async () => withDefaults((await import('./members.js')).runMembersPass),
    everyMs: (config) => config.schedules.membersMs,
    // Each connected member brings their own tokens; the OAuth client and key must be configured.
    needsOAuth: true,
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
