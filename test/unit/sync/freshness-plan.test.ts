import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { projectFreshness, type PlanInput } from '../../../src/sync/freshness-plan.js';

const HOUR = 3_600_000;
const config = loadConfig({});

/** The world of issue 32 at 10 rps, with the default settings. */
const production: PlanInput = {
  rateLimitRps: 10,
  pageSize: 100,
  schedules: config.schedules,
  lookback: { windows: 24, everyMs: config.checkins.lookbackEveryMs },
  intentPollShare: 0.5,
  memberSyncShare: 0.2,
  locationsPerPass: 750,
  counts: {
    restaurants: 5_000,
    locations: 20_000,
    challenges: 15_000,
    activeMembers: 10_000,
    openIntents: 1_000,
    checkInsPerHour: 2_000,
  },
  cadences: config.freshness.cadences,
  learnedIntervalMs: {},
};

describe('projectFreshness', () => {
  it('10,000 members at their default ceilings: reads and a token refresh per hourly read', () => {
    // The intents at about what 1,000 open intents were measured to spend (BENCHMARKS.md).
    const plan = projectFreshness({ ...production, intentPollShare: 0.3 });
    const members = plan.streams.find((s) => s.stream === 'members')!;
    // visits hourly (10,000/h), profile, status, tags, memberships daily (4 x 417/h), wallets weekly
    // (60/h), and a refresh per visits read: a 60-minute access token has run out an hour later.
    const reads = 10_000 + (4 * 10_000) / 24 + 10_000 / 168;
    expect(members.requestsPerHour).toBe(Math.round(reads + 10_000));
    const visits = plan.records.find((r) => r.kind === 'member.visits')!;
    expect(visits).toMatchObject({
      records: 10_000,
      readEverySeconds: 3600,
      readAgeP95Seconds: 3420,
      setBy: 'ceiling',
    });
    expect(plan.problems.filter((p) => p.startsWith('members'))).toEqual([]);
  });

  it('says so when the intents take their whole share and the refreshes no longer fit at 10 rps', () => {
    const plan = projectFreshness(production);
    expect(plan.budget.find((b) => b.stream === 'members')!.demandPerHour).toBe(21_727);
    expect(plan.problems.find((p) => p.startsWith('members'))).toMatch(
      /^members need 21,726 requests\/h at their ceilings \(token refreshes included\)/,
    );
  });

  it("a restaurant's challenges on their adaptive cadence: at the 6 h ceiling before any read, then as learned", () => {
    const plan = projectFreshness(production);
    expect(plan.records.find((r) => r.kind === 'restaurant.challenges')).toMatchObject({
      records: 5_000,
      readEverySeconds: 6 * 3600,
      requestsPerHour: Math.round(5_000 / 6),
      setBy: 'ceiling',
    });
    const learned = projectFreshness({
      ...production,
      learnedIntervalMs: { 'restaurant.challenges': HOUR / 60 },
    });
    // Learned every minute, but the pass looks for due lists every CHALLENGES_EVERY (1 h).
    expect(learned.records.find((r) => r.kind === 'restaurant.challenges')).toMatchObject({
      readEverySeconds: 3600,
      requestsPerHour: 5_000,
      setBy: 'learned',
    });
  });

  it('says when the members allowance cannot pay for the ceilings, and stretches every kind alike', () => {
    // 2 rps (7,200/h): intents keep 3,600, the feed 236, members their 1,440 floor and what is left.
    const plan = projectFreshness({ ...production, rateLimitRps: 2 });
    const members = plan.budget.find((b) => b.stream === 'members')!;
    expect(members).toMatchObject({ share: 0.2, floorPerHour: 1_440, demandPerHour: 21_727 });
    expect(members.allowancePerHour).toBe(7_200 - 3_600 - 236 - 239);
    expect(plan.problems[0]).toMatch(
      /^members need 21,726 requests\/h at their ceilings \(token refreshes included\), the budget leaves them 3,125/,
    );
    const visits = plan.records.find((r) => r.kind === 'member.visits')!;
    expect(visits.setBy).toBe('budget');
    // Stretched past an hour, every visits read needs its refresh: 21,726 / 3,125 times the ceiling.
    expect(visits.readEverySeconds! / ((3600 * 21_726.19) / 3125)).toBeCloseTo(1, 2);
    const membersStream = plan.streams.find((s) => s.stream === 'members')!;
    expect(membersStream.requestsPerHour).toBeLessThanOrEqual(3125);
  });

  it('lends members what the intents leave: at MEMBER_SYNC_SHARE 0.05 they still read at their ceilings', () => {
    const plan = projectFreshness({ ...production, memberSyncShare: 0.05, intentPollShare: 0.3 });
    const members = plan.budget.find((b) => b.stream === 'members')!;
    expect(members.floorPerHour).toBe(1_800);
    expect(members.allowancePerHour).toBeGreaterThanOrEqual(21_726);
    expect(plan.problems.filter((p) => p.startsWith('members'))).toEqual([]);
    expect(plan.records.find((r) => r.kind === 'member.visits')!.setBy).toBe('ceiling');
  });

  it('uses the intervals learned so far, within floor and ceiling', () => {
    const plan = projectFreshness({
      ...production,
      counts: { ...production.counts, activeMembers: 100 },
      learnedIntervalMs: { 'member.visits': HOUR / 2, 'member.tags': 1, 'member.status': 30 * 24 * HOUR },
    });
    const kind = (name: string) => plan.records.find((r) => r.kind === name)!;
    expect(kind('member.visits')).toMatchObject({ readEverySeconds: 1800, setBy: 'learned' });
    expect(kind('member.tags').readEverySeconds).toBe(300); // the 5 min floor
    expect(kind('member.status').readEverySeconds).toBe(86_400); // the 24 h ceiling
  });

  it("a location's full form and open hours at their 7 d ceilings, within the hourly pass budget", () => {
    const plan = projectFreshness(production);
    for (const kind of ['location.full', 'location.open_hours']) {
      expect(plan.records.find((r) => r.kind === kind)).toMatchObject({
        records: 20_000,
        readEverySeconds: 7 * 86_400,
        requestsPerHour: Math.round(20_000 / (7 * 24)),
        setBy: 'ceiling',
      });
    }
    expect(plan.problems.filter((p) => p.startsWith('locations'))).toEqual([]);
  });

  it('says when locationRefreshBudget per LOCATIONS_EVERY cannot pay for the ceilings, and stretches both kinds', () => {
    // A daily pass: 750 locations (1,500 requests) a day, against 2 x 20,000 a week.
    const plan = projectFreshness({
      ...production,
      schedules: { ...production.schedules, locationsMs: 24 * HOUR },
    });
    const full = plan.records.find((r) => r.kind === 'location.full')!;
    expect(full.setBy).toBe('budget');
    // 20,000 locations at 750 a day: each kind every 26.7 days.
    expect(full.readEverySeconds).toBe(Math.round((20_000 / 750) * 86_400));
    expect(plan.problems.find((p) => p.startsWith('locations'))).toMatch(/read later than their ceilings/);
  });

  it('property: no figure is negative, allowances fit the limit, and members never plan more than their allowance', () => {
    fc.assert(
      fc.property(
        fc.record({
          restaurants: fc.nat(10_000),
          locations: fc.nat(50_000),
          challenges: fc.nat(50_000),
          activeMembers: fc.nat(50_000),
          openIntents: fc.nat(5_000),
          checkInsPerHour: fc.nat(10_000),
        }),
        fc.double({ min: 0.1, max: 100, noNaN: true }),
        (counts, rps) => {
          const plan = projectFreshness({ ...production, rateLimitRps: rps, counts });
          for (const s of plan.streams) expect(s.requestsPerHour).toBeGreaterThanOrEqual(0);
          const allowances = plan.budget.reduce((sum, b) => sum + b.allowancePerHour, 0);
          expect(allowances).toBeLessThanOrEqual(plan.limitPerHour);
          const members = plan.streams.find((s) => s.stream === 'members')!.requestsPerHour;
          const allowance = plan.budget.find((b) => b.stream === 'members')!.allowancePerHour;
          expect(members).toBeLessThanOrEqual(allowance + 1);
        },
      ),
    );
  });
});
