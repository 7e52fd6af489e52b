import { createPrng, type Prng } from '../prng.js';
import type { ChallengeRecord, ChallengeType, LocationRecord, RestaurantRecord } from '../world.js';

const DAY_MS = 86_400_000;
/** 10^18 smallest units per token; rewards are big integers, some beyond 2^64. */
const TOKEN = 10n ** 18n;

export const CHALLENGE_TYPES: readonly ChallengeType[] = ['PAYMENT', 'REFERRALS', 'DINES', 'PASSPORT'];

export function thresholdFor(type: ChallengeType, rng: Prng, locationIds: string[]): Record<string, unknown> {
  switch (type) {
    case 'PAYMENT':
      return {
        spend_threshold: { value: (BigInt(rng.between(5, 50)) * 10n * TOKEN).toString(), currency: 'SVC' },
        minimum_spend: { value: (BigInt(rng.between(1, 5)) * TOKEN).toString(), currency: 'SVC' },
      };
    case 'REFERRALS':
      return { referral_threshold: rng.between(1, 5) };
    case 'DINES':
      return { dine_threshold: rng.between(3, 12) };
    case 'PASSPORT':
      // Decision (spec: not shown): visit `location_threshold` distinct locations among `location_ids`.
      return { location_threshold: Math.max(1, Math.min(locationIds.length, 3)), location_ids: locationIds };
  }
}

export function generateChallenges(
  seed: number,
  anchorMs: number,
  restaurants: RestaurantRecord[],
  locations: LocationRecord[],
  /** Total challenges, spread evenly over restaurants; null keeps the fixture's 2–4 per restaurant. */
  total: number | null = null,
): ChallengeRecord[] {
  const rng = createPrng(seed, 'challenges');
  const challenges: ChallengeRecord[] = [];
  const locationIdsOf = new Map<number, string[]>();
  for (const l of locations) {
    const own = locationIdsOf.get(l.restaurantIndex) ?? [];
    own.push(l.id);
    locationIdsOf.set(l.restaurantIndex, own);
  }
  const n = restaurants.length;
  for (const restaurant of restaurants) {
    const own = locationIdsOf.get(restaurant.index) ?? [];
    const r = restaurant.index;
    const count =
      total === null ? rng.between(2, 4) : Math.floor(((r + 1) * total) / n) - Math.floor((r * total) / n);
    for (let i = 0; i < count; i++) {
      // Every restaurant's first four challenges cycle through all types, so each type exists everywhere.
      const type = CHALLENGE_TYPES[i % CHALLENGE_TYPES.length] ?? 'DINES';
      const scoped = own.length > 1 && rng.chance(0.35) ? [rng.pick(own)] : null;
      const createdAtMs = anchorMs - rng.between(10, 120) * DAY_MS;
      // Some rewards exceed 2^64 on purpose: clients must parse them as big integers.
      const reward = rng.chance(0.3)
        ? BigInt(rng.between(20, 90)) * 10n ** 21n + BigInt(rng.between(1, 999))
        : BigInt(rng.between(1, 500)) * TOKEN;
      challenges.push({
        id: rng.uuid(),
        restaurantId: restaurant.id,
        locationIds: scoped,
        type,
        title: `${restaurant.name}: ${type.toLowerCase()} challenge`,
        description: `Complete the ${type.toLowerCase()} goal at ${restaurant.name} to earn tokens.`,
        image: rng.chance(0.6) ? `https://assets.svc-sim.example/challenges/${restaurant.id}/${i}.jpg` : null,
        threshold: thresholdFor(type, rng, scoped ?? own),
        tokenReward: { value: reward.toString(), currency: 'SVC' },
        startTimeMs: rng.chance(0.8) ? createdAtMs : null,
        endTimeMs: rng.chance(0.5) ? anchorMs + rng.between(5, 90) * DAY_MS : null,
        terms: ['One reward per member.', 'Tokens are credited within 24 hours of completion.'],
        acceptedCurrencies: type === 'PAYMENT' ? ['SVC', 'USD'] : ['SVC'],
        createdAtMs,
        updatedAtMs: createdAtMs + rng.between(0, 5) * DAY_MS,
      });
    }
  }
  return challenges;
}
