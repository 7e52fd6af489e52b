import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerError } from '../../../src/api/errors.js';
import { fixedClock } from '../../../src/clock.js';
import { createSpendLedger } from '../../../src/api/spend-ledger.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { currentAppWalletId, runBalancePass } from '../../../src/streams/balance.js';
import { runChallengesPass } from '../../../src/streams/challenges.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import { mapPages, startHarness, type SnapshotHarness } from './harness.js';

let h: SnapshotHarness;
beforeAll(async () => {
  h = await startHarness('snap_challenges');
  await h.run('restaurants', runRestaurantsPass);
});
afterAll(async () => {
  await h?.close();
});

type SimChallenge = Record<string, unknown> & {
  id: string;
  token_reward: { value: string; currency: string };
};
const simChallenges = () => h.sim.control.challenges.list() as SimChallenge[];
const challenge = (id: string) =>
  h.database.db.selectFrom('rewards.challenges').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const versionsOf = (id: string) =>
  h.database.db
    .selectFrom('rewards.challenges_history')
    .selectAll()
    .where('id', '=', id)
    .orderBy('valid_from')
    .execute();
const TWO_TO_64 = 2n ** 64n;
/** Every restaurant read, whatever the adaptive cadence says: what one complete read does. */
const everyRestaurant = (deps: Parameters<typeof runChallengesPass>[0]) =>
  runChallengesPass(deps, { everyRecord: true });

describe('challenges snapshot', () => {
  it('stores every challenge of every restaurant with exact amounts and lower-case currencies', async () => {
    const outcome = await h.run('challenges', runChallengesPass);
    expect(outcome.status).toBe('succeeded');
    const listed = simChallenges();
    const rows = await h.database.db.selectFrom('rewards.challenges').selectAll().execute();
    expect(rows).toHaveLength(listed.length);
    expect(outcome.details).toMatchObject({ new: listed.length, newVersions: listed.length });

    const big = listed.find((c) => BigInt(c.token_reward.value) > TWO_TO_64);
    expect(big).toBeDefined();
    const stored = await challenge(big!.id);
    expect(stored.token_reward_value).toBe(big!.token_reward.value);
    expect(stored.token_reward_currency).toBe(big!.token_reward.currency.toLowerCase());
    expect(stored.token_reward_currency).toBe('svc');
    expect(h.sim.control.challenges.list(stored.restaurant_id).map((c) => c['id'])).toContain(big!.id);
    expect(stored.created_at?.toISOString()).toBe(new Date(String(big!['created_at'])).toISOString());
    for (const row of rows) {
      expect(row.accepted_currencies.every((c) => c === c.toLowerCase())).toBe(true);
    }
  });

  it('keeps typed thresholds and the full threshold, unknown fields included', async () => {
    const listed = simChallenges();
    const payment = listed.find((c) => c['type'] === 'PAYMENT')!;
    const threshold = payment['threshold'] as {
      spend_threshold: { value: string; currency: string };
      minimum_spend: { value: string };
    };
    const stored = await challenge(payment.id);
    expect(stored.spend_threshold_value).toBe(threshold.spend_threshold.value);
    expect(stored.spend_threshold_currency).toBe('svc');
    expect(stored.minimum_spend_value).toBe(threshold.minimum_spend.value);
    expect(stored.threshold).toMatchObject({
      spend_threshold: { value: threshold.spend_threshold.value, currency: 'svc' },
    });

    const dines = listed.find((c) => c['type'] === 'DINES')!;
    expect((await challenge(dines.id)).dine_threshold).toBe(
      (dines['threshold'] as { dine_threshold: number }).dine_threshold,
    );

    const passport = listed.find((c) => c['type'] === 'PASSPORT')!;
    const storedPassport = await challenge(passport.id);
    expect(storedPassport.threshold).toEqual(passport['threshold']);
    expect(storedPassport.spend_threshold_value).toBeNull();
  });

  it('an unchanged pass opens no version; an edit opens exactly one', async () => {
    const quiet = await h.run('challenges', everyRestaurant);
    expect(quiet.details).toMatchObject({ newVersions: 0, deletions: { marked: 0 } });
    const target = simChallenges()[0]!;
    h.sim.control.challenges.update(target.id, {
      title: 'Brand new title',
      tokenReward: (TWO_TO_64 * 3n + 7n).toString(),
    });
    const edited = await h.run('challenges', everyRestaurant);
    expect(edited.details).toMatchObject({ newVersions: 1, changed: 1 });
    const stored = await challenge(target.id);
    expect(stored.title).toBe('Brand new title');
    expect(stored.token_reward_value).toBe((TWO_TO_64 * 3n + 7n).toString());
    const versions = await versionsOf(target.id);
    expect(versions).toHaveLength(2);
    expect(versions[0]!.valid_to?.getTime()).toBe(versions[1]!.valid_from.getTime());
  });

  it('a challenge gone from its restaurant is marked deleted', async () => {
    const target = simChallenges()[1]!;
    h.sim.control.challenges.remove(target.id);
    const outcome = await h.run('challenges', everyRestaurant);
    expect(outcome.details).toMatchObject({ deletions: { marked: 1 } });
    expect((await challenge(target.id)).deleted_at).not.toBeNull();
    expect((await versionsOf(target.id)).every((v) => v.valid_to !== null)).toBe(true);
  });

  it('no deletion for a restaurant whose challenge pages failed', async () => {
    const target = simChallenges()[2]!;
    const restaurantId = (await challenge(target.id)).restaurant_id;
    h.sim.control.challenges.remove(target.id);
    const failingForOne: PartnerApi = {
      ...h.api,
      challengePages: (id, options) => {
        if (id !== restaurantId) return h.api.challengePages(id, options);
        return mapPages(h.api.challengePages(id, options), () => {
          throw new ServerError('text/html', { status: 503 });
        });
      },
    };
    const outcome = await h.run('challenges', everyRestaurant, { api: failingForOne });
    expect(outcome.status).toBe('partial');
    expect(outcome.details).toMatchObject({ restaurantsIncomplete: 1, deletions: { marked: 0 } });
    expect((await challenge(target.id)).deleted_at).toBeNull();

    const next = await h.run('challenges', everyRestaurant);
    expect(next.details).toMatchObject({ deletions: { marked: 1 } });
    expect((await challenge(target.id)).deleted_at).not.toBeNull();
  });
});

describe('challenges on the adaptive cadence (docs/freshness.md)', () => {
  const HOUR = 3_600_000;
  const readsOfRestaurants = async () =>
    new Map(
      (
        await h.database.db
          .selectFrom('rewards.record_reads')
          .select(['record_id', 'interval_seconds', 'reads'])
          .where('kind', '=', 'restaurant.challenges')
          .execute()
      ).map((row) => [row.record_id, row]),
    );
  const liveRestaurants = async () =>
    (
      await h.database.db
        .selectFrom('rewards.restaurants')
        .select('id')
        .where('deleted_at', 'is', null)
        .execute()
    ).map((row) => row.id);

  it('a pass reads only the restaurants due: none right after every one was read', async () => {
    const live = await liveRestaurants();
    const reads = await readsOfRestaurants();
    expect([...reads.keys()].sort()).toEqual([...live].sort());
    const { floorMs, ceilingMs } = h.config.freshness.cadences['restaurant.challenges'];
    for (const row of reads.values()) {
      expect(row.interval_seconds * 1000).toBeGreaterThanOrEqual(floorMs);
      expect(row.interval_seconds * 1000).toBeLessThanOrEqual(ceilingMs);
    }
    const quiet = await h.run('challenges', runChallengesPass);
    expect(quiet.status).toBe('succeeded');
    expect(quiet.requests).toBe(0);
    expect(quiet.details).toMatchObject({
      restaurants: live.length,
      restaurantsDue: 0,
      deletions: { marked: 0 },
    });
  });

  it('a change halves the interval, a read that found none stretches it; past the ceiling every one is due', async () => {
    const before = await readsOfRestaurants();
    const target = simChallenges()[3]!;
    const changedRestaurant = (await challenge(target.id)).restaurant_id;
    const quietRestaurant = [...before.keys()].find((id) => id !== changedRestaurant)!;
    h.sim.control.challenges.update(target.id, { title: 'Changed for the cadence' });
    await h.run('challenges', everyRestaurant);
    const after = await readsOfRestaurants();
    const ceilingSeconds = h.config.freshness.cadences['restaurant.challenges'].ceilingMs / 1000;
    expect(after.get(changedRestaurant)!.interval_seconds).toBeCloseTo(
      before.get(changedRestaurant)!.interval_seconds / 2,
      -1,
    );
    expect(after.get(quietRestaurant)!.interval_seconds).toBeCloseTo(
      Math.min(ceilingSeconds, before.get(quietRestaurant)!.interval_seconds * 1.5),
      -1,
    );

    const later = fixedClock(new Date(h.clock.now().getTime() + 6 * HOUR + 1_000));
    const due = await h.run('challenges', runChallengesPass, { clock: later });
    expect(due.details).toMatchObject({ restaurantsDue: (await liveRestaurants()).length });
  });

  it('reads no more lists than its allowance of the one budget; the rest stay due for the next pass', async () => {
    // Past the ceiling again, with the feed and the intents having spent the whole limit over the
    // last hour (the ledger every process writes to): challenges, below them, get no floor.
    const at = new Date(h.clock.now().getTime() + 2 * 6 * HOUR + 2_000);
    const clock = fixedClock(at);
    const ledger = createSpendLedger({
      redis: h.redis,
      prefix: h.config.redisPrefix,
      nowMs: () => at.getTime() - 60_000,
    });
    // More than an hour of the limit: the ledger's window is a little longer than the hour.
    const hourOfLimit = h.config.api.rateLimitRps * 3600;
    await ledger.record('payment_intents', 2 * hourOfLimit);
    const live = await liveRestaurants();
    const squeezed = await h.run('challenges', runChallengesPass, { clock });
    expect(squeezed.details).toMatchObject({
      restaurantsDue: live.length,
      budget: 1,
      skippedForBudget: live.length - 1,
      restaurantsNotVisited: 0,
    });
    expect(squeezed.requests).toBe(1);
    // An hour later the spend is out of the window: every list still due is read.
    const idle = fixedClock(new Date(at.getTime() + 2 * HOUR));
    const caughtUp = await h.run('challenges', runChallengesPass, { clock: idle });
    expect(caughtUp.details).toMatchObject({ restaurantsDue: live.length - 1, skippedForBudget: 0 });
  });
});

describe('balance snapshot', () => {
  it('one exact row per pass, and the app wallet id for the intents stream', async () => {
    expect(await currentAppWalletId(h.database.db)).toBeUndefined();
    const first = await h.run('balance', runBalancePass);
    expect(first.status).toBe('succeeded');
    await h.run('balance', runBalancePass);
    const rows = await h.database.db
      .selectFrom('rewards.balance_snapshots')
      .selectAll()
      .orderBy('observed_at')
      .execute();
    expect(rows).toHaveLength(2);
    const balance = h.sim.control.app.balance();
    expect(BigInt(balance)).toBeGreaterThan(TWO_TO_64);
    expect(rows[0]!.balance_value).toBe(balance);
    expect(rows[0]!.balance_currency).toBe('svc');
    expect(Number(rows[0]!.balance_usd_cents)).toBeGreaterThan(0);
    expect(await currentAppWalletId(h.database.db)).toBe(h.sim.credentials.appWalletId);
  });
});
