import { CUISINES, RESTAURANT_TAGS } from '../data/catalog.js';
import { CHALLENGE_TYPES, thresholdFor } from '../data/generate-challenges.js';
import type { Prng } from '../prng.js';
import { addChallengeRecord, removeChallengeRecord } from '../world-index.js';
import type { ChallengeRecord, LocationRecord, OpenHoursPeriod, RestaurantRecord } from '../world.js';
import type { ChangeContext } from './change-context.js';
import { exponentialMs } from './rhythmic-arrivals.js';

const TOKEN = 10n ** 18n;

/**
 * The discovery catalogue changing slowly: restaurant edits, location edits, open-hours edits,
 * challenges started and ended. Removed restaurants and locations stop changing. A challenge leaves
 * /challenges when its end_time passes (challenges without one stay).
 */
export function startCatalogChanges(ctx: ChangeContext): void {
  const { world, settings } = ctx;
  for (const restaurant of world.restaurants) {
    every(
      ctx,
      'restaurants',
      settings.restaurantEditEveryMs,
      () => !restaurant.removed,
      (rng, atMs) => editRestaurant(ctx, rng, restaurant, atMs),
    );
    every(
      ctx,
      'challenges',
      settings.challengeAddedEveryMs,
      () => !restaurant.removed,
      (rng, atMs) => addChallenge(ctx, rng, restaurant, atMs),
    );
  }
  for (const location of world.locations) {
    every(
      ctx,
      'locations',
      settings.locationEditEveryMs,
      () => !location.removed,
      (rng, atMs) => editLocation(ctx, rng, location, atMs),
    );
    every(
      ctx,
      'open-hours',
      settings.openHoursEditEveryMs,
      () => !location.removed,
      (rng, atMs) => editOpenHours(ctx, rng, location, atMs),
    );
  }
  for (const challenge of world.challenges) endChallengeAtItsEnd(ctx, challenge);
}

/** `change` at exponential intervals with the given mean, while `alive()` holds. */
function every(
  ctx: ChangeContext,
  process: string,
  meanMs: number,
  alive: () => boolean,
  change: (rng: Prng, atMs: number) => void,
): void {
  const rng = ctx.rng(process);
  const next = (fromMs: number): void =>
    ctx.schedule(fromMs + exponentialMs(rng, meanMs), (atMs) => {
      if (!alive()) return;
      change(rng, atMs);
      next(atMs);
    });
  next(ctx.startMs);
}

function editRestaurant(ctx: ChangeContext, rng: Prng, r: RestaurantRecord, atMs: number): void {
  switch (rng.int(4)) {
    case 0: {
      const [low, high] = r.cohort === 'qsr' ? [1, 2] : [2, 4];
      r.price = r.price === high ? low + rng.int(high - low) : r.price + 1;
      break;
    }
    case 1:
      r.instagramUrl =
        r.instagramUrl === null
          ? `https://instagram.com/${r.name.toLowerCase().replace(/[^a-z0-9]/g, '')}`
          : null;
      break;
    case 2: {
      const cuisine = rng.pick(CUISINES);
      r.cuisine = r.cuisine.includes(cuisine)
        ? r.cuisine.length > 1
          ? r.cuisine.filter((c) => c !== cuisine)
          : [cuisine === 'american' ? 'bbq' : 'american']
        : [...r.cuisine, cuisine];
      break;
    }
    default:
      r.tags = [{ id: rng.uuid(), object: 'tag', name: rng.pick(RESTAURANT_TAGS) }];
  }
  // The list shows epoch seconds: every edit moves updated_at by at least a second.
  r.updatedAtMs = Math.max(r.updatedAtMs + 1000, Math.floor(atMs / 1000) * 1000);
  ctx.world.truth.record('restaurant', r.id, atMs);
  ctx.count('restaurantEdited');
}

function editLocation(ctx: ChangeContext, rng: Prng, l: LocationRecord, atMs: number): void {
  switch (rng.int(4)) {
    case 0:
      l.phoneNumber = `+1${rng.between(201, 989)}${rng.between(2000000, 9999999)}`;
      break;
    case 1:
      l.paymentsEnabled = !l.paymentsEnabled;
      break;
    case 2:
      l.isClub = !l.isClub;
      break;
    default:
      l.reservationsEnabled = !l.reservationsEnabled;
      l.reservationUrl = l.reservationsEnabled ? `https://reserve.example.com/${l.slug}` : null;
  }
  l.updatedAtMs = Math.max(l.updatedAtMs + 1, atMs);
  ctx.world.truth.record('location', l.id, atMs);
  ctx.count('locationEdited');
}

/** One period opens or closes half an hour earlier or later (a new array: the old one may be shared). */
function editOpenHours(ctx: ChangeContext, rng: Prng, l: LocationRecord, atMs: number): void {
  const periods: OpenHoursPeriod[] = l.openHours.map((p) => ({ ...p }));
  if (periods.length === 0) periods.push({ day_of_week: rng.int(7), opens_at: '11:00', closes_at: '21:00' });
  else {
    const period = periods[rng.int(periods.length)];
    if (period) {
      const shift = rng.chance(0.5) ? 30 : -30;
      if (rng.chance(0.5)) period.closes_at = shiftTime(period.closes_at, shift);
      else period.opens_at = shiftTime(period.opens_at, shift);
    }
  }
  l.openHours = periods;
  ctx.world.truth.record('location.open_hours', l.id, atMs);
  ctx.count('openHoursEdited');
}

function shiftTime(hhmm: string, minutes: number): string {
  const [h = 0, m = 0] = hhmm.split(':').map(Number);
  const total = (((h * 60 + m + minutes) % 1440) + 1440) % 1440;
  return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}

function addChallenge(ctx: ChangeContext, rng: Prng, r: RestaurantRecord, atMs: number): void {
  const { world } = ctx;
  const own = world.locations.filter((l) => l.restaurantIndex === r.index && !l.removed).map((l) => l.id);
  const type = rng.pick(CHALLENGE_TYPES);
  const scoped = own.length > 1 && rng.chance(0.35) ? [rng.pick(own)] : null;
  const challenge: ChallengeRecord = {
    id: rng.uuid(),
    restaurantId: r.id,
    locationIds: scoped,
    type,
    title: `${r.name}: new ${type.toLowerCase()} challenge`,
    description: `Complete the ${type.toLowerCase()} goal at ${r.name} to earn tokens.`,
    image: null,
    threshold: thresholdFor(type, rng, scoped ?? own),
    tokenReward: { value: (BigInt(rng.between(1, 500)) * TOKEN).toString(), currency: 'SVC' },
    startTimeMs: atMs,
    endTimeMs: atMs + exponentialMs(rng, ctx.settings.challengeLifetimeMs),
    terms: ['One reward per member.'],
    acceptedCurrencies: type === 'PAYMENT' ? ['SVC', 'USD'] : ['SVC'],
    createdAtMs: atMs,
    updatedAtMs: atMs,
  };
  if (!Number.isFinite(challenge.endTimeMs)) challenge.endTimeMs = null;
  addChallengeRecord(world, challenge);
  world.truth.record('restaurant.challenges', r.id, atMs);
  ctx.count('challengeAdded');
  endChallengeAtItsEnd(ctx, challenge);
}

function endChallengeAtItsEnd(ctx: ChangeContext, challenge: ChallengeRecord): void {
  const endMs = challenge.endTimeMs;
  if (endMs === null || endMs <= ctx.startMs) return;
  ctx.schedule(endMs, (atMs) => {
    // Still listed and still ending then (the control surface may have removed or changed it).
    if (challenge.endTimeMs !== atMs || !removeChallengeRecord(ctx.world, challenge.id)) return;
    ctx.world.truth.record('restaurant.challenges', challenge.restaurantId, atMs);
    ctx.count('challengeEnded');
  });
}
