import { NEIGHBORHOODS } from '../data/catalog.js';
import { levelTraits } from '../data/generate-members.js';
import { utcOffsetMinutes } from '../data/rhythm.js';
import type { Prng } from '../prng.js';
import type { LocationRecord, MemberCheckIn, MemberRecord } from '../world.js';
import type { ChangeContext } from './change-context.js';
import {
  activityClassOf,
  exponentialMs,
  memberVisitLengthMs,
  nextRhythmicArrival,
  rhythmAt,
} from './rhythmic-arrivals.js';

const TOKEN = 10n ** 18n;

/**
 * What members do: visits (each changes the visit history when it starts and when it ends, and the
 * memberships when it starts: check_in_count and last_check_in_date are derived from visits), status
 * updates, tag and profile edits. Wallets never change: they are provisioned once. Members added
 * after the model started (control `members.add`) are not driven by it.
 */
export function startMemberChanges(ctx: ChangeContext): void {
  const { world, settings, startMs } = ctx;
  const offsets = world.neighborhoods.map((n) => utcOffsetMinutes(n.timeZone, startMs));
  world.members.forEach((member, index) => {
    const gapMs =
      settings.memberActivity[activityClassOf(world.seed, index, settings.memberActivity)]?.visitEveryMs ?? 0;
    const home = world.locations[member.favouriteLocations[0] ?? -1];
    const offset = home ? (offsets[home.neighborhoodIndex] ?? 0) : 0;
    startVisits(ctx, member, gapMs, (atMs) => rhythmAt(atMs, offset, world.rhythm));
    repeat(ctx, 'status', settings.statusEveryMs, member, updateStatus);
    repeat(ctx, 'tags', settings.tagsEveryMs, member, changeTags);
    repeat(ctx, 'profile', settings.profileEveryMs, member, changeProfile);
  });
}

/** A change at exponential intervals with the given mean, for as long as it returns true. */
function repeat(
  ctx: ChangeContext,
  process: string,
  meanMs: number,
  member: MemberRecord,
  change: (ctx: ChangeContext, rng: Prng, member: MemberRecord, atMs: number) => boolean,
): void {
  const rng = ctx.rng(process);
  const next = (fromMs: number): void =>
    ctx.schedule(fromMs + exponentialMs(rng, meanMs), (atMs) => {
      if (change(ctx, rng, member, atMs)) next(atMs);
    });
  next(ctx.startMs);
}

/**
 * Visit starts are a Poisson process following the day's rhythm, at a mean of one per `gapMs` over
 * whole days, whatever the visits' lengths: a member who checks in somewhere while still at a
 * previous visit has left it, so that visit ends then. Each visit otherwise ends after 25–110 minutes.
 */
function startVisits(
  ctx: ChangeContext,
  member: MemberRecord,
  gapMs: number,
  intensityAt: (atMs: number) => number,
): void {
  const rng = ctx.rng('visits');
  const { world } = ctx;
  let current: MemberCheckIn | null = null;
  const end = (visit: MemberCheckIn, atMs: number): void => {
    visit.endedAtMs = atMs;
    world.truth.record('member.visits', member.id, atMs);
    ctx.count('visitEnded');
  };
  const scheduleEnd = (visit: MemberCheckIn, endMs: number): void =>
    ctx.schedule(endMs, (atMs) => {
      // Ended already: by the next check-in, or by the control surface (members.endVisits).
      if (visit.endedAtMs === null) end(visit, atMs);
    });
  const scheduleNext = (fromMs: number): void =>
    ctx.schedule(nextRhythmicArrival(rng, fromMs, gapMs, intensityAt), (atMs) => {
      scheduleNext(atMs);
      const location = visitLocation(rng, member, world.locations);
      if (!location) return;
      if (current?.endedAtMs === null) end(current, atMs);
      current = {
        id: rng.uuid(),
        locationIndex: location.index,
        svcPayEnabled: location.paymentsEnabled,
        createdAtMs: atMs,
        endedAtMs: null,
      };
      member.checkIns.unshift(current);
      world.truth.record('member.visits', member.id, atMs);
      world.truth.record('member.memberships', member.id, atMs);
      ctx.count('visitStarted');
      scheduleEnd(current, atMs + memberVisitLengthMs(rng));
    });
  // A generated member may be dining as the model starts: that visit ends like any other.
  const newest = member.checkIns[0];
  if (newest && newest.endedAtMs === null) {
    current = newest;
    scheduleEnd(newest, Math.max(ctx.startMs, newest.createdAtMs + memberVisitLengthMs(rng)));
  }
  scheduleNext(ctx.startMs);
}

/** 70 % at one of the member's favourite locations, else anywhere; never a removed location. */
function visitLocation(
  rng: Prng,
  member: MemberRecord,
  locations: LocationRecord[],
): LocationRecord | undefined {
  const favourite = member.favouriteLocations.length > 0 && rng.chance(0.7);
  for (let attempt = 0; attempt < 8; attempt++) {
    const index =
      favourite && attempt === 0 ? rng.pick(member.favouriteLocations) : rng.int(locations.length);
    const location = locations[index];
    if (location && !location.removed) return location;
  }
  return undefined;
}

/** Progress moves; with tierMoveShare the level moves one step (and with it tier, track, multiplier). */
function updateStatus(ctx: ChangeContext, rng: Prng, member: MemberRecord, atMs: number): boolean {
  const active = member.statuses.find((s) => s.state === 'active');
  if (!active) return false; // no active status: the route answers 404, and keeps doing so
  active.progress.checkIns += rng.between(0, 3);
  active.progress.spendCents += rng.between(0, 20_000);
  active.progress.tokenDeposit += BigInt(rng.between(0, 50)) * TOKEN;
  if (rng.chance(ctx.settings.tierMoveShare)) {
    const level = active.level >= 7 ? 6 : active.level <= 1 ? 2 : active.level + (rng.chance(0.6) ? 1 : -1);
    Object.assign(active, { level, ...levelTraits(level) });
  }
  active.updatedAtMs = atMs;
  ctx.world.truth.record('member.status', member.id, atMs);
  ctx.count('statusChanged');
  return true;
}

/** The industry tag (a restaurant employee) appears, goes, or moves to other restaurants. */
function changeTags(ctx: ChangeContext, rng: Prng, member: MemberRecord, atMs: number): boolean {
  const { world } = ctx;
  const restaurantId = (): string => {
    const location = world.locations[rng.int(world.locations.length)];
    return (location && world.restaurants[location.restaurantIndex]?.id) ?? '';
  };
  const tag = member.tags[0];
  if (!tag) {
    member.tags = [
      {
        type: 'industry',
        metadata: [{ key: 'restaurant_ids', value: [restaurantId()] }],
        createdAtMs: atMs,
        updatedAtMs: atMs,
      },
    ];
  } else if (rng.chance(0.5)) {
    member.tags = [];
  } else {
    member.tags = [
      { ...tag, metadata: [{ key: 'restaurant_ids', value: [restaurantId()] }], updatedAtMs: atMs },
    ];
  }
  world.truth.record('member.tags', member.id, atMs);
  ctx.count('tagsChanged');
  return true;
}

function changeProfile(ctx: ChangeContext, rng: Prng, member: MemberRecord, atMs: number): boolean {
  switch (rng.int(3)) {
    case 0:
      member.phoneNumber = `+1${rng.between(201, 989)}${rng.between(2000000, 9999999)}`;
      break;
    case 1:
      member.zipcode = rng.pick(NEIGHBORHOODS).zip;
      break;
    default:
      member.avatar =
        member.avatar === null ? `https://assets.svc-sim.example/avatars/${member.id}-${atMs}.png` : null;
  }
  member.updatedAtMs = atMs;
  ctx.world.truth.record('member.profile', member.id, atMs);
  ctx.count('profileChanged');
  return true;
}
