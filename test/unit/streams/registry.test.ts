import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expandStreams } from '../../../src/cli/commands/run.js';
import { loadConfig } from '../../../src/config/config.js';
import {
  STREAMS,
  followUpsOf,
  OAUTH_STREAMS,
  oauthOf,
  streamEnabled,
} from '../../../src/streams/registry.js';
import { STREAM_NAMES, isStreamName } from '../../../src/sync/stream-facts.js';
import { checkinsPlanJob } from '../../../jobs/checkins-plan.js';
import { scheduledPasses, streamPassJob } from '../../../jobs/stream-pass.js';
import { JOBS } from '../../../jobs/registry.js';
import {
  ROUTE_FAMILIES,
  budgetStreamForPath,
  credentialForPath,
} from '../../../src/api/credential-routing.js';
import { BUDGET_STREAMS, budgetShares, type BudgetStream } from '../../../src/sync/budget-allocation.js';
import { API_STREAMS, STREAM_FACTS } from '../../../src/sync/stream-facts.js';
import { envSchema } from '../../../src/config/env-schema.js';

const KEY = Buffer.alloc(32, 7).toString('base64');
const withoutOAuth = loadConfig({ RESTAURANTS_EVERY: '61m', BALANCE_EVERY: '7m', CHECKINS_EVERY: '45s' });
const withOAuth = loadConfig({
  SVC_API_BASE_URL: 'https://api.example.test/v1',
  SVC_OAUTH_CLIENT_ID: '6f1c1c1e-0000-4000-8000-000000000001',
  SVC_OAUTH_CLIENT_SECRET: 'client-secret-value-1234567890',
  TOKEN_ENCRYPTION_KEY: KEY,
  PAYMENT_INTENTS_EVERY: '3m',
});

describe('the stream registry', () => {
  it('names the streams in the order `run all` takes them', () => {
    expect(STREAM_NAMES).toEqual([
      'restaurants',
      'checkins',
      'locations',
      'challenges',
      'balance',
      'payment_intents',
      'alerts',
      'members',
    ]);
    expect(expandStreams(['all'])).toEqual(STREAM_NAMES);
    expect(isStreamName('checkins')).toBe(true);
    expect(isStreamName('toString')).toBe(false);
  });

  it("the README's `run` row lists the registry's streams in its order, and its OAuth streams", () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `run <stream…>`')) ?? '';
    const listed = row.slice(row.indexOf('Streams:'), row.indexOf('or `all`'));
    expect([...listed.matchAll(/`([a-z_]+)`/g)].map((m) => m[1])).toEqual(STREAM_NAMES);
    const oauthNote = row.slice(row.indexOf('the OAuth streams'));
    expect(OAUTH_STREAMS.every((stream) => oauthNote.includes(`\`${stream}\``))).toBe(true);
  });

  it('an OAuth stream gets the OAuth settings; asking for them elsewhere is a programming error', () => {
    expect(OAUTH_STREAMS).toEqual(['payment_intents', 'members']);
    expect(oauthOf(withOAuth, 'members')).toBe(withOAuth.oauth);
    expect(() => oauthOf(withoutOAuth, 'members')).toThrow('members needs OAuth');
    expect(() => oauthOf(withOAuth, 'checkins')).toThrow('does not read with OAuth');
  });

  it('every stream has a pass to load', async () => {
    for (const stream of STREAM_NAMES) {
      expect(typeof (await STREAMS[stream].loadPass())).toBe('function');
    }
  });

  it('an OAuth stream is enabled only with OAuth configured', () => {
    expect(STREAM_NAMES.filter((stream) => !streamEnabled(withoutOAuth, stream))).toEqual([
      'payment_intents',
      'members',
    ]);
    expect(STREAM_NAMES.every((stream) => streamEnabled(withOAuth, stream))).toBe(true);
  });

  it('the worker schedules one stream-pass per stream, check-ins through their planner, OAuth streams only with OAuth', () => {
    const ids = (config: typeof withOAuth) => streamPassJob.schedules(config).map((schedule) => schedule.id);
    expect(ids(withoutOAuth)).toEqual([
      'stream-restaurants',
      'stream-locations',
      'stream-challenges',
      'stream-balance',
      'stream-alerts',
    ]);
    expect(ids(withOAuth)).toContain('stream-payment_intents');
    expect(ids(withOAuth)).toContain('stream-members');
    expect(streamPassJob.schedules(withoutOAuth).find((s) => s.id === 'stream-restaurants')?.everyMs).toBe(
      61 * 60_000,
    );
    expect(scheduledPasses(withOAuth).find((s) => s.stream === 'payment_intents')?.everyMs).toBe(3 * 60_000);
    expect(checkinsPlanJob.schedules(withoutOAuth)).toEqual([
      { id: 'checkins-plan', everyMs: 45_000, data: {} },
    ]);
  });

  it("names for every stream a worker job that schedules it, and only checkins' planner besides stream-pass", () => {
    for (const stream of STREAM_NAMES) expect(JOBS[STREAMS[stream].scheduledBy]).toBeDefined();
    expect(STREAM_NAMES.filter((stream) => STREAMS[stream].scheduledBy !== 'stream-pass')).toEqual([
      'checkins',
    ]);
  });

  // BUDGET_STREAMS (src/sync/budget-allocation.ts), ROUTE_FAMILIES (src/api/credential-routing.ts)
  // and the interval settings of the env schema are derived from the streams' facts
  // (src/sync/stream-facts.ts): these pin what they derive to, so a fact typed wrong shows here.
  it('every stream that reads the partner API has a stream of the budget and routes with its credential', () => {
    const readsTheApi = STREAM_NAMES.filter((stream) => stream !== 'alerts');
    expect(API_STREAMS).toEqual(readsTheApi);
    expect(BUDGET_STREAMS).toEqual([
      'checkins',
      'payment_intents',
      'oauth',
      'members',
      'locations',
      'restaurants',
      'challenges',
      'balance',
    ]);
    for (const stream of readsTheApi) {
      const families = ROUTE_FAMILIES.filter((family) => family.spendsOn === (stream as BudgetStream));
      expect(families.length, stream).toBeGreaterThan(0);
      const credential = STREAMS[stream].needsOAuth ? 'bearer' : 'api-key';
      expect(
        families.map((family) => family.credential),
        stream,
      ).toEqual(families.map(() => credential));
    }
    expect(budgetStreamForPath('/users/me/check_ins')).toBe('members');
    expect(credentialForPath('/payment_intents/abc')).toBe('bearer');
    expect(credentialForPath('/check_ins')).toBe('api-key');
  });

  it('the shares of the budget: the intents and members by their settings, locations a quarter', () => {
    expect(budgetShares({ intentPollShare: 0.5, memberSyncShare: 0.2 })).toEqual({
      checkins: 0,
      payment_intents: 0.5,
      oauth: 0,
      members: 0.2,
      locations: 0.25,
      restaurants: 0,
      challenges: 0,
      balance: 0,
    });
  });

  it("each stream's interval setting and default come from its facts", () => {
    const defaults = loadConfig({});
    for (const stream of STREAM_NAMES) {
      const { setting, defaultMs } = STREAM_FACTS[stream].schedule;
      expect(Object.hasOwn(envSchema.shape, setting), setting).toBe(true);
      expect(STREAMS[stream].everyMs(defaults), stream).toBe(defaultMs);
    }
    expect(STREAMS.restaurants.everyMs(withoutOAuth)).toBe(61 * 60_000);
    expect(STREAMS.checkins.everyMs(withoutOAuth)).toBe(45_000);
    expect(defaults.schedules).toEqual({
      checkinsMs: 30_000,
      restaurantsMs: 3_600_000,
      challengesMs: 3_600_000,
      locationsMs: 3_600_000,
      balanceMs: 300_000,
      paymentIntentsMs: 5_000,
      alertsMs: 2_000,
      membersMs: 900_000,
    });
  });

  it('every stream says how it is re-synced; alerts, which reads nothing, cannot be', () => {
    expect(STREAM_NAMES.filter((stream) => 'unsupported' in STREAMS[stream].resync)).toEqual(['alerts']);
    expect(
      STREAM_NAMES.filter((stream) => {
        const resync = STREAMS[stream].resync;
        return !('unsupported' in resync) && resync.usesRange;
      }),
    ).toEqual(['checkins', 'payment_intents']);
  });

  it('a restaurants pass that found new restaurants is followed by a challenges pass', () => {
    expect(followUpsOf(withoutOAuth, 'restaurants', { newRestaurants: 2 })).toEqual(['challenges']);
    expect(followUpsOf(withoutOAuth, 'restaurants', { newRestaurants: 0 })).toEqual([]);
    expect(followUpsOf(withoutOAuth, 'restaurants', undefined)).toEqual([]);
    expect(followUpsOf(withoutOAuth, 'challenges', { newRestaurants: 2 })).toEqual([]);
  });

  it('a check-in planner tick that found never-refreshed locations is followed by a locations pass', () => {
    expect(followUpsOf(withoutOAuth, 'checkins', { locationsNeverRefreshed: 3 })).toEqual(['locations']);
    expect(followUpsOf(withoutOAuth, 'checkins', { locationsNeverRefreshed: 0 })).toEqual([]);
  });
});
