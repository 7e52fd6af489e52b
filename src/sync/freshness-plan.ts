import {
  BUDGET_STREAMS,
  allocateBudget,
  budgetShares,
  type BudgetStream,
  type StreamAllowance,
} from './budget-allocation.js';
import { MEMBER_KINDS } from './member-read-plan.js';
import { STREAM_FACTS, type ApiStream, type StreamSchedules } from './stream-facts.js';
import { refreshesPerHour } from './member-token-refresh.js';
import type { Cadence, ReadKind } from './read-cadence.js';

// `rewards-etl plan` (docs/freshness.md): what the rate limit buys, projected before anything runs
// from the counts in the warehouse and the settings. Pure: the command reads the counts.

const HOUR_MS = 3_600_000;

export interface PlanInput {
  rateLimitRps: number;
  pageSize: number;
  /** The intervals of `Config.schedules` the projection reads (the streams that poll on a schedule). */
  schedules: Omit<StreamSchedules, 'paymentIntentsMs' | 'alertsMs'>;
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

/** Requests per hour each stream but members (and oauth) would send: their claims on the budget. */
type StreamDemands = Record<Exclude<ApiStream, 'members'>, number>;

type Interval = ReturnType<typeof cadenceInterval>;

export function projectFreshness(input: PlanInput): FreshnessPlan {
  const { counts, schedules } = input;
  const limitPerHour = input.rateLimitRps * 3600;
  const problems: string[] = [];
  const challengeReads = challengeReadsOf(input);
  const locationReads = locationReadsOf(input);
  if (locationReads.problem !== null) problems.push(locationReads.problem);
  const demands: StreamDemands = {
    checkins: feedRequestsPerHour(input),
    restaurants: pageCount(input, counts.restaurants) * perHour(schedules.restaurantsMs),
    challenges: challengeReads.requestsPerHour,
    locations: locationReads.requestsPerHour,
    balance: perHour(schedules.balanceMs),
    payment_intents: counts.openIntents === 0 ? 0 : limitPerHour * input.intentPollShare,
  };
  const memberWants = memberWantsOf(input);
  const allocation = allocateBudget({
    limit: limitPerHour,
    claims: claimsOf(input, { ...demands, oauth: 0, members: memberWants.perHour }),
  });
  const memberReads = memberReadsWithin(input, memberWants, allocation);
  if (memberReads.problem !== null) problems.push(memberReads.problem);
  const streams = streamProjections(demands, memberReads.requestsPerHour);
  const total = streams.reduce((sum, s) => sum + s.requestsPerHour, 0);
  if (total > limitPerHour)
    problems.push(
      `the streams would need ${Math.round(total).toLocaleString('en-US')} requests/h, the limit is ${Math.round(limitPerHour).toLocaleString('en-US')}: the shared limiter will make passes wait`,
    );
  return {
    limitPerHour,
    streams: streams.map((s) => ({ ...s, requestsPerHour: Math.round(s.requestsPerHour) })),
    records: recordProjections(input, demands, challengeReads, locationReads, memberReads.records),
    totalRequestsPerHour: Math.round(total),
    budget: allocation.map((row) => budgetRow(row, input.requestsLastHour)),
    problems,
  };
}

const pageCount = (input: PlanInput, n: number) => Math.max(1, Math.ceil(n / input.pageSize));

/**
 * The feed: the head of the open window on every pass, new check-ins a page at a time, and one
 * probe per window of the look-back on its own cadence.
 */
function feedRequestsPerHour(input: PlanInput): number {
  return (
    perHour(input.schedules.checkinsMs) +
    input.counts.checkInsPerHour / input.pageSize +
    input.lookback.windows * perHour(input.lookback.everyMs)
  );
}

/** A restaurant's list on its adaptive cadence, looked for every CHALLENGES_EVERY. */
function challengeReadsOf(input: PlanInput): { interval: Interval; requestsPerHour: number } {
  const { counts } = input;
  const challengesPerRestaurant = counts.restaurants === 0 ? 0 : counts.challenges / counts.restaurants;
  const interval = cadenceInterval(input, 'restaurant.challenges', input.schedules.challengesMs);
  return {
    interval,
    requestsPerHour:
      (counts.restaurants * pageCount(input, challengesPerRestaurant) * HOUR_MS) / interval.everyMs,
  };
}

/**
 * A location's full form and open hours on their adaptive cadence, within locationRefreshBudget
 * (two requests a location) per LOCATIONS_EVERY: stretched alike when that cannot pay for them.
 */
function locationReadsOf(input: PlanInput) {
  const kinds = (['location.full', 'location.open_hours'] as const).map((kind) => ({
    kind,
    ...cadenceInterval(input, kind, 0),
  }));
  const wanted = kinds.reduce((sum, k) => sum + (input.counts.locations * HOUR_MS) / k.everyMs, 0);
  const budget = input.locationsPerPass * 2 * perHour(input.schedules.locationsMs);
  const stretch = wanted > budget && budget > 0 ? wanted / budget : 1;
  return {
    kinds,
    stretch,
    requestsPerHour: Math.min(wanted, budget),
    problem:
      stretch > 1
        ? `locations need ${Math.round(wanted).toLocaleString('en-US')} requests/h at their ceilings, locationRefreshBudget per LOCATIONS_EVERY gives ${Math.round(budget).toLocaleString('en-US')}: they will be read later than their ceilings (shorten LOCATIONS_EVERY or raise the ceilings)`
        : null,
  };
}

/**
 * Members: each kind at the interval learned so far (or its ceiling before any read), and the token
 * refreshes of members read that often (a member is read as often as its most frequent kind).
 */
function memberWantsOf(input: PlanInput) {
  const kinds = MEMBER_KINDS.map((kind) => ({ kind, ...cadenceInterval(input, kind, 0) }));
  const reads = kinds.reduce((sum, w) => sum + (input.counts.activeMembers * HOUR_MS) / w.everyMs, 0);
  const refreshes = memberRefreshesPerHour(input, kinds, 1);
  return { kinds, perHour: reads + refreshes };
}

function memberRefreshesPerHour(
  input: PlanInput,
  kinds: readonly { everyMs: number }[],
  stretch: number,
): number {
  const mostFrequentMs = Math.min(...kinds.map((k) => k.everyMs)) * stretch;
  return input.counts.activeMembers * refreshesPerHour(mostFrequentMs);
}

/**
 * The member kinds stretched evenly when the members' allowance of the one budget (what the feed,
 * the intents and the snapshots' floors leave; at least MEMBER_SYNC_SHARE) cannot pay for them
 * and their token refreshes: the least stretch that fits (reads and refreshes both fall with it).
 */
function memberReadsWithin(
  input: PlanInput,
  wants: ReturnType<typeof memberWantsOf>,
  allocation: StreamAllowance[],
): { records: RecordProjection[]; requestsPerHour: number; problem: string | null } {
  const memberBudget = allocation.find((row) => row.stream === 'members')?.allowance ?? 0;
  const at = (stretch: number) => {
    const memberRecords = wants.kinds.map((w) =>
      records(w.kind, input.counts.activeMembers, w.everyMs * stretch, 1, stretch > 1 ? 'budget' : w.setBy),
    );
    const reads = memberRecords.reduce((sum, r) => sum + r.requestsPerHour, 0);
    return {
      records: memberRecords,
      requestsPerHour: reads + memberRefreshesPerHour(input, wants.kinds, stretch),
    };
  };
  const stretch = wants.perHour > memberBudget && memberBudget > 0 ? leastStretch(at, memberBudget) : 1;
  return {
    ...at(stretch),
    problem:
      stretch > 1
        ? `members need ${Math.round(wants.perHour).toLocaleString('en-US')} requests/h at their ceilings (token refreshes included), the budget leaves them ${Math.round(memberBudget).toLocaleString('en-US')}: records will be read later than their ceilings`
        : null,
  };
}

/** The least stretch (to 0.1 %) at which the members' requests an hour fit `budget`. */
function leastStretch(at: (stretch: number) => { requestsPerHour: number }, budget: number): number {
  let low = 1;
  let high = 2;
  while (at(high).requestsPerHour > budget && high < 1e9) high *= 2;
  while (high / low > 1.001) {
    const mid = (low + high) / 2;
    if (at(mid).requestsPerHour > budget) low = mid;
    else high = mid;
  }
  return high;
}

function streamProjections(demands: StreamDemands, members: number): StreamProjection[] {
  return [
    {
      stream: 'checkins',
      requestsPerHour: demands.checkins,
      basis: 'one page per pass + new check-ins / page size + look-back probes',
    },
    {
      stream: 'restaurants',
      requestsPerHour: demands.restaurants,
      basis: `every page per ${STREAM_FACTS.restaurants.schedule.setting}`,
    },
    {
      stream: 'challenges',
      requestsPerHour: demands.challenges,
      basis: 'one list per restaurant, on its adaptive cadence',
    },
    {
      stream: 'locations',
      requestsPerHour: demands.locations,
      basis: 'due full forms and open hours, on their adaptive cadence, within the pass budget',
    },
    {
      stream: 'balance',
      requestsPerHour: demands.balance,
      basis: `one read per ${STREAM_FACTS.balance.schedule.setting}`,
    },
    {
      stream: 'payment_intents',
      requestsPerHour: demands.payment_intents,
      basis: 'INTENT_POLL_SHARE of the limit while intents are open (their floor)',
    },
    {
      stream: 'members',
      requestsPerHour: members,
      basis:
        'due kinds only, on their adaptive cadence, and the token refresh a read needs once the 60-minute access token ran out',
    },
  ];
}

function recordProjections(
  input: PlanInput,
  demands: StreamDemands,
  challengeReads: ReturnType<typeof challengeReadsOf>,
  locationReads: ReturnType<typeof locationReadsOf>,
  memberRecords: RecordProjection[],
): RecordProjection[] {
  const { counts, schedules } = input;
  const { interval } = challengeReads;
  const { stretch } = locationReads;
  // Snapshots are read on their streams' fixed schedules: the stream's requests are the kind's.
  const snapshot = (kind: string, count: number, everyMs: number | null, requestsPerHour: number) => ({
    ...records(kind, count, everyMs, 0, 'schedule'),
    requestsPerHour,
  });
  return [
    snapshot('restaurant', counts.restaurants, schedules.restaurantsMs, demands.restaurants),
    {
      ...records('restaurant.challenges', counts.restaurants, interval.everyMs, 0, interval.setBy),
      requestsPerHour: demands.challenges,
    },
    ...locationReads.kinds.map((k) =>
      records(k.kind, counts.locations, k.everyMs * stretch, 1, stretch > 1 ? 'budget' : k.setBy),
    ),
    ...memberRecords,
  ].map((row) => ({ ...row, requestsPerHour: Math.round(row.requestsPerHour) }));
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
