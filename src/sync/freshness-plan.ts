import {
  BUDGET_STREAMS,
  allocateBudget,
  budgetShares,
  type BudgetStream,
  type StreamAllowance,
} from './budget-allocation.js';
import { MEMBER_KINDS } from './member-read-plan.js';
import type { Cadence, ReadKind } from './read-cadence.js';

// `rewards-etl plan` (docs/freshness.md): what the rate limit buys, projected before anything runs
// from the counts in the warehouse and the settings. Pure: the command reads the counts.

const HOUR_MS = 3_600_000;

export interface PlanInput {
  rateLimitRps: number;
  pageSize: number;
  schedules: {
    checkinsMs: number;
    restaurantsMs: number;
    challengesMs: number;
    locationsMs: number;
    balanceMs: number;
    membersMs: number;
  };
  lookback: { windows: number; everyMs: number };
  intentPollShare: number;
  memberSyncShare: number;
  /** Locations one locations pass refreshes (locationRefreshBudget), two requests each. */
  locationsPerPass: number;
  counts: {
    restaurants: number;
    locations: number;
    challenges: number;
    activeMembers: number;
    openIntents: number;
    /** New check-ins per hour over the last day. */
    checkInsPerHour: number;
  };
  cadences: Record<ReadKind, Cadence>;
  /** The median interval learned so far per kind (rewards.record_reads), when there is one. */
  learnedIntervalMs: Partial<Record<ReadKind, number>>;
  /** Requests of the passes started in the last hour, per stream (sync_runs), shown beside the budget. */
  requestsLastHour?: Partial<Record<string, number>>;
}

/** One stream's part of the one budget over an hour (docs/rate-limit.md). */
export interface BudgetProjection {
  stream: BudgetStream;
  share: number;
  floorPerHour: number;
  /** The stream's projected requests/h (members: at their ceilings or learned intervals). */
  demandPerHour: number;
  allowancePerHour: number;
  /** sync_runs.requests of the passes started in the last hour (null: the stream has no passes of its own). */
  requestsLastHour: number | null;
}

export interface StreamProjection {
  stream: string;
  requestsPerHour: number;
  /** How the figure is made, for the reader. */
  basis: string;
}

export interface RecordProjection {
  kind: string;
  records: number;
  /** Every record read once per this long (on average). */
  readEverySeconds: number | null;
  /** Age since last read, spread evenly over the interval: p50 half of it, p95 95 % of it. */
  readAgeP50Seconds: number | null;
  readAgeP95Seconds: number | null;
  requestsPerHour: number;
  /** What sets the interval: the kind's ceiling, the interval learned so far, the schedule, or the budget. */
  setBy: 'ceiling' | 'learned' | 'schedule' | 'budget';
}

export interface FreshnessPlan {
  limitPerHour: number;
  streams: StreamProjection[];
  records: RecordProjection[];
  totalRequestsPerHour: number;
  /** The one budget across streams over an hour: each stream's share, projected demand and allowance. */
  budget: BudgetProjection[];
  problems: string[];
}

const perHour = (everyMs: number) => HOUR_MS / everyMs;

function records(
  kind: string,
  count: number,
  readEveryMs: number | null,
  requestsPerRead: number,
  setBy: RecordProjection['setBy'],
): RecordProjection {
  const seconds = readEveryMs === null || count === 0 ? null : readEveryMs / 1000;
  return {
    kind,
    records: count,
    readEverySeconds: seconds === null ? null : Math.round(seconds),
    readAgeP50Seconds: seconds === null ? null : Math.round(seconds / 2),
    readAgeP95Seconds: seconds === null ? null : Math.round(seconds * 0.95),
    requestsPerHour:
      readEveryMs === null || count === 0 ? 0 : (count * requestsPerRead * HOUR_MS) / readEveryMs,
    setBy,
  };
}

export function projectFreshness(input: PlanInput): FreshnessPlan {
  const { counts, schedules, pageSize } = input;
  const limitPerHour = input.rateLimitRps * 3600;
  const problems: string[] = [];
  const pages = (n: number) => Math.max(1, Math.ceil(n / pageSize));

  // The feed: the head of the open window on every pass, new check-ins a page at a time, and one
  // probe per window of the look-back on its own cadence.
  const feed =
    perHour(schedules.checkinsMs) +
    counts.checkInsPerHour / pageSize +
    input.lookback.windows * perHour(input.lookback.everyMs);
  const restaurants = pages(counts.restaurants) * perHour(schedules.restaurantsMs);
  const challengesPerRestaurant = counts.restaurants === 0 ? 0 : counts.challenges / counts.restaurants;
  // A restaurant's list on its adaptive cadence, looked for every CHALLENGES_EVERY.
  const challengesEvery = cadenceInterval(input, 'restaurant.challenges', schedules.challengesMs);
  const challenges =
    (counts.restaurants * pages(challengesPerRestaurant) * HOUR_MS) / challengesEvery.everyMs;
  // A location's full form and open hours on their adaptive cadence, within locationRefreshBudget
  // (two requests a location) per LOCATIONS_EVERY: stretched alike when that cannot pay for them.
  const locationKinds = (['location.full', 'location.open_hours'] as const).map((kind) => ({
    kind,
    ...cadenceInterval(input, kind, 0),
  }));
  const locationsWanted = locationKinds.reduce((sum, k) => sum + (counts.locations * HOUR_MS) / k.everyMs, 0);
  const locationsBudget = input.locationsPerPass * 2 * perHour(schedules.locationsMs);
  const locationStretch =
    locationsWanted > locationsBudget && locationsBudget > 0 ? locationsWanted / locationsBudget : 1;
  const locations = Math.min(locationsWanted, locationsBudget);
  if (locationStretch > 1)
    problems.push(
      `locations need ${Math.round(locationsWanted).toLocaleString('en-US')} requests/h at their ceilings, locationRefreshBudget per LOCATIONS_EVERY gives ${Math.round(locationsBudget).toLocaleString('en-US')}: they will be read later than their ceilings (shorten LOCATIONS_EVERY or raise the ceilings)`,
    );
  const balance = perHour(schedules.balanceMs);
  const intentsCap = counts.openIntents === 0 ? 0 : limitPerHour * input.intentPollShare;

  // Members: each kind at the interval learned so far (or its ceiling before any read), stretched
  // evenly when the members' allowance of the one budget (what the feed, the intents and the
  // snapshots' floors leave; at least MEMBER_SYNC_SHARE) cannot pay for it.
  const wanted = MEMBER_KINDS.map((kind) => ({ kind, ...cadenceInterval(input, kind, 0) }));
  const wantedPerHour = wanted.reduce((sum, w) => sum + (counts.activeMembers * HOUR_MS) / w.everyMs, 0);
  const allocation = allocateBudget({
    limit: limitPerHour,
    claims: claimsOf(input, {
      checkins: feed,
      payment_intents: intentsCap,
      oauth: 0,
      members: wantedPerHour,
      locations,
      restaurants,
      challenges,
      balance,
    }),
  });
  const memberBudget = allocation.find((row) => row.stream === 'members')?.allowance ?? 0;
  const stretch = wantedPerHour > memberBudget && memberBudget > 0 ? wantedPerHour / memberBudget : 1;
  const memberRecords = wanted.map((w) =>
    records(w.kind, counts.activeMembers, w.everyMs * stretch, 1, stretch > 1 ? 'budget' : w.setBy),
  );
  const members = memberRecords.reduce((sum, r) => sum + r.requestsPerHour, 0);
  if (stretch > 1)
    problems.push(
      `members need ${Math.round(wantedPerHour).toLocaleString('en-US')} requests/h at their ceilings, the budget leaves them ${Math.round(memberBudget).toLocaleString('en-US')}: records will be read later than their ceilings`,
    );

  const streams: StreamProjection[] = [
    {
      stream: 'checkins',
      requestsPerHour: feed,
      basis: 'one page per pass + new check-ins / page size + look-back probes',
    },
    { stream: 'restaurants', requestsPerHour: restaurants, basis: 'every page per RESTAURANTS_EVERY' },
    {
      stream: 'challenges',
      requestsPerHour: challenges,
      basis: 'one list per restaurant, on its adaptive cadence',
    },
    {
      stream: 'locations',
      requestsPerHour: locations,
      basis: 'due full forms and open hours, on their adaptive cadence, within the pass budget',
    },
    { stream: 'balance', requestsPerHour: balance, basis: 'one read per BALANCE_EVERY' },
    {
      stream: 'payment_intents',
      requestsPerHour: intentsCap,
      basis: 'INTENT_POLL_SHARE of the limit while intents are open (their floor)',
    },
    { stream: 'members', requestsPerHour: members, basis: 'due kinds only, on their adaptive cadence' },
  ];
  const total = streams.reduce((sum, s) => sum + s.requestsPerHour, 0);
  if (total > limitPerHour)
    problems.push(
      `the streams would need ${Math.round(total).toLocaleString('en-US')} requests/h, the limit is ${Math.round(limitPerHour).toLocaleString('en-US')}: the shared limiter will make passes wait`,
    );
  // Snapshots are read on their streams' fixed schedules: the stream's requests are the kind's.
  const snapshot = (kind: string, count: number, everyMs: number | null, requestsPerHour: number) => ({
    ...records(kind, count, everyMs, 0, 'schedule'),
    requestsPerHour,
  });
  const rows: RecordProjection[] = [
    snapshot('restaurant', counts.restaurants, schedules.restaurantsMs, restaurants),
    {
      ...records(
        'restaurant.challenges',
        counts.restaurants,
        challengesEvery.everyMs,
        0,
        challengesEvery.setBy,
      ),
      requestsPerHour: challenges,
    },
    ...locationKinds.map((k) =>
      records(
        k.kind,
        counts.locations,
        k.everyMs * locationStretch,
        1,
        locationStretch > 1 ? 'budget' : k.setBy,
      ),
    ),
    ...memberRecords,
  ].map((row) => ({ ...row, requestsPerHour: Math.round(row.requestsPerHour) }));
  return {
    limitPerHour,
    streams: streams.map((s) => ({ ...s, requestsPerHour: Math.round(s.requestsPerHour) })),
    records: rows,
    totalRequestsPerHour: Math.round(total),
    budget: allocation.map((row) => budgetRow(row, input.requestsLastHour)),
    problems,
  };
}

/** A kind's interval: learned so far (or its ceiling before any read), never below `passEveryMs`. */
function cadenceInterval(input: PlanInput, kind: ReadKind, passEveryMs: number) {
  const learned = input.learnedIntervalMs[kind];
  const cadence = input.cadences[kind];
  const everyMs =
    learned === undefined
      ? cadence.ceilingMs
      : Math.min(cadence.ceilingMs, Math.max(cadence.floorMs, learned));
  return {
    everyMs: Math.max(passEveryMs, everyMs),
    setBy: learned === undefined ? ('ceiling' as const) : ('learned' as const),
  };
}

function claimsOf(input: PlanInput, demands: Record<BudgetStream, number>) {
  const shares = budgetShares(input);
  return BUDGET_STREAMS.map((stream) => ({
    stream,
    share: shares[stream],
    spent: 0,
    demand: Math.ceil(demands[stream]),
  }));
}

function budgetRow(row: StreamAllowance, lastHour: PlanInput['requestsLastHour']): BudgetProjection {
  return {
    stream: row.stream,
    share: row.share,
    floorPerHour: row.floor,
    demandPerHour: row.demand,
    allowancePerHour: row.allowance,
    requestsLastHour: row.stream === 'oauth' ? null : (lastHour?.[row.stream] ?? 0),
  };
}
