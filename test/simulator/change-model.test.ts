import { describe, expect, test } from 'vitest';
import { activityClassOf } from '../../src/simulator/changes/rhythmic-arrivals.js';
import {
  createSimulator,
  DEFAULT_CHANGE_SETTINGS,
  type Simulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';
import { ANCHOR, callIn } from './sim-fixture.js';

const DAY = 86_400_000;
const WEEK = 7 * DAY;
const START = ANCHOR.getTime();

/**
 * A count of independent rare events is Poisson: the observed count lies within five standard
 * deviations of the mean (one chance in 1.7 million of failing for a random seed; the seed is fixed,
 * so the test cannot flake, and a wrong rate by a few percent at these means still fails).
 */
function expectPoissonCount(observed: number, mean: number, what: string): void {
  const slack = 5 * Math.sqrt(mean) + 1;
  expect(
    Math.abs(observed - mean),
    `${what}: ${observed} observed, ${mean.toFixed(1)} expected`,
  ).toBeLessThanOrEqual(slack);
}

function world(seed: number, options: Partial<SimulatorOptions> = {}): Simulator {
  return createSimulator({
    seed,
    anchor: ANCHOR,
    clock: { now: () => ANCHOR },
    checkIns: 5_000,
    days: 7,
    size: { restaurants: 400, locations: 1_600, challenges: 800, members: 2_000, openIntents: 200 },
    changes: true,
    rhythm: 'daily',
    ...options,
  });
}

describe('change model over a simulated week (default rates, fixed seed)', () => {
  const seed = 21;
  const sim = world(seed);
  const members = sim.control.members.list();
  const sample = members.filter((_, i) => i % 100 === 0 || i < 4);
  const walletsBefore = Promise.all(
    sample.map(async (m) => {
      const bearer = await sim.control.credentials.accessToken({ memberId: m.id });
      return (await callIn(sim, '/users/me/wallets', { bearer })).text;
    }),
  );
  const openBefore = sim.control.world.info().size.openIntents;
  let advanced: ReturnType<Simulator['control']['world']['advanceTo']>;
  const advance = walletsBefore.then(() => {
    advanced = sim.control.world.advanceTo(new Date(START + WEEK));
  });

  test('visits: each activity class visits at its configured mean rate; memberships change with every visit', async () => {
    await advance;
    const classes = DEFAULT_CHANGE_SETTINGS.memberActivity;
    const starts = new Map<string, number>();
    for (const change of sim.control.world.truth.changesSince(START, START + WEEK))
      if (change.kind === 'member.memberships') starts.set(change.id, (starts.get(change.id) ?? 0) + 1);
    classes.forEach((activity, k) => {
      const inClass = members.filter((_, i) => activityClassOf(seed, i, classes) === k);
      const observed = inClass.reduce((sum, m) => sum + (starts.get(m.id) ?? 0), 0);
      expectPoissonCount(observed, (inClass.length * WEEK) / activity.visitEveryMs, `class ${k} visits`);
    });
    const applied = sim.control.world.info().changes!.applied;
    expect(advanced.changes['member.memberships']).toBe(applied.visitStarted);
    // A visit changes the history when it starts and when it ends (a next check-in ends it at its own start).
    expect(advanced.changes['member.visits']).toBeGreaterThanOrEqual(applied.visitStarted);
    expect(advanced.changes['member.visits']).toBeLessThanOrEqual(applied.visitStarted + applied.visitEnded);
  });

  test('status about weekly, tags and profiles rarely, per member', async () => {
    await advance;
    const withStatus = members.filter((m) => m.hasActiveStatus).length;
    expectPoissonCount(advanced.changes['member.status'], (withStatus * WEEK) / (7 * DAY), 'status');
    expectPoissonCount(advanced.changes['member.tags'], (members.length * WEEK) / (180 * DAY), 'tags');
    expectPoissonCount(advanced.changes['member.profile'], (members.length * WEEK) / (90 * DAY), 'profile');
  });

  test('wallets never change: none in the truth, and the API serves the same wallets a week later', async () => {
    await advance;
    expect(advanced.changes['member.wallets']).toBe(0);
    expect(sim.control.world.info().changes!.applied.intentPaid).toBeGreaterThan(1_000);
    const after = await Promise.all(
      sample.map(async (m) => {
        const bearer = await sim.control.credentials.accessToken({ memberId: m.id });
        return (await callIn(sim, '/users/me/wallets', { bearer })).text;
      }),
    );
    expect(after).toEqual(await walletsBefore);
    for (const m of sample)
      expect(sim.control.world.truth.lastChangedAt('member.wallets', m.id)).toBeLessThan(START);
  });

  test('restaurants, locations and open hours are edited rarely; restaurants start challenges now and then', async () => {
    await advance;
    expectPoissonCount(advanced.changes.restaurant, (400 * WEEK) / (60 * DAY), 'restaurant edits');
    expectPoissonCount(advanced.changes.location, (1_600 * WEEK) / (90 * DAY), 'location edits');
    expectPoissonCount(advanced.changes['location.open_hours'], (1_600 * WEEK) / (180 * DAY), 'open hours');
    const applied = sim.control.world.info().changes!.applied;
    expectPoissonCount(applied.challengeAdded, (400 * WEEK) / (30 * DAY), 'challenges added');
    expect(applied.challengeEnded).toBeGreaterThan(0);
    expect(advanced.changes['restaurant.challenges']).toBe(applied.challengeAdded + applied.challengeEnded);
  });

  test('intents arrive at the rate that keeps the open intents steady; most are paid, some canceled', async () => {
    await advance;
    const applied = sim.control.world.info().changes!.applied;
    // 200 open, each open 0.95 × 4 h + 0.05 × 24 h = 5 h on average: 40 an hour.
    expectPoissonCount(applied.intentCreated, (200 / 5) * 24 * 7, 'intents created');
    expectPoissonCount(sim.control.world.info().size.openIntents, openBefore, 'open intents after a week');
    expect(applied.intentCanceled / applied.intentPaid).toBeGreaterThan((0.1 / 0.85) * 0.8);
    expect(applied.intentCanceled / applied.intentPaid).toBeLessThan((0.1 / 0.85) * 1.2);
    expectPoissonCount(applied.intentRefunded, applied.intentPaid * 0.01, 'refunds');
  });

  test('the venue feed grows at the generated history rate, with the daily rhythm', async () => {
    await advance;
    const applied = sim.control.world.info().changes!.applied;
    expectPoissonCount(applied.feedArrived, 5_000, 'feed check-ins in a week');
    const feed = await callIn(sim, `/check_ins?created_after=${new Date(START).toISOString()}&page_size=1`, {
      apiKey: sim.credentials.apiKey,
    });
    expect(feed.json.pagination.total_count).toBe(applied.feedArrived);
  });
});

describe('determinism', () => {
  const small = { restaurants: 60, locations: 200, challenges: 100, members: 300, openIntents: 30 };

  test('same seed: the same changes at the same instants, whether the week runs in one step or 168 with requests between', async () => {
    const once = world(4, { size: small, checkIns: 1_000, days: 3 });
    const stepped = world(4, { size: small, checkIns: 1_000, days: 3 });
    const other = world(5, { size: small, checkIns: 1_000, days: 3 });
    once.control.world.advanceTo(new Date(START + WEEK));
    other.control.world.advanceTo(new Date(START + WEEK));
    for (let hour = 1; hour <= 168; hour++) {
      stepped.control.clock.set(new Date(START + hour * 3_600_000)); // applied lazily by the request
      if (hour % 24 === 0)
        await callIn(stepped, '/restaurants?page_size=1', { apiKey: stepped.credentials.apiKey });
      else stepped.control.world.advanceTo(new Date(START + hour * 3_600_000));
    }
    const log = (sim: Simulator) => [...sim.control.world.truth.changesSince(-Infinity)];
    const served = async (sim: Simulator) => {
      const bearer = await sim.control.credentials.accessToken({
        memberId: sim.control.members.list()[7]!.id,
      });
      return [
        (await callIn(sim, '/restaurants?page_size=100', { apiKey: sim.credentials.apiKey })).text,
        (await callIn(sim, '/users/me/check_ins?page_size=500', { bearer })).text,
        (await callIn(sim, '/payment_intents?page_size=100', { bearer })).text,
      ];
    };
    expect(log(once).length).toBeGreaterThan(1_000);
    expect(log(stepped)).toEqual(log(once));
    expect(await served(stepped)).toEqual(await served(once));
    expect(log(other)).not.toEqual(log(once));
  });
});
