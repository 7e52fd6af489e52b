import { createPrng } from '../prng.js';
import type { LocationRecord, Neighborhood, OpenHoursPeriod, RestaurantRecord } from '../world.js';
import {
  CUISINES,
  NEIGHBORHOODS,
  RESTAURANT_TAGS,
  RESTAURANT_WORDS_A,
  RESTAURANT_WORDS_B,
  STREETS,
} from './catalog.js';

const DAY_MS = 86_400_000;
const ASSET_HOST = 'https://assets.svc-sim.example';

export function generateNeighborhoods(seed: number): Neighborhood[] {
  const rng = createPrng(seed, 'neighborhoods');
  return NEIGHBORHOODS.map((n) => ({
    id: rng.uuid(),
    name: n.name,
    region: n.region,
    timeZone: n.timeZone,
    city: n.city,
    state: n.state,
    country: n.country,
    latitude: n.lat,
    longitude: n.lng,
  }));
}

export function imageAsset(
  kind: string,
  id: string,
  expiresAtSeconds: number,
): {
  preview_1x: string;
  web_2x: string;
  full_3x: string;
} {
  // Real URLs carry an expiry query parameter; the simulator mimics it so clients do not diff on it.
  const url = (size: string): string => `${ASSET_HOST}/${kind}/${id}/${size}.jpg?expires=${expiresAtSeconds}`;
  return { preview_1x: url('preview_1x'), web_2x: url('web_2x'), full_3x: url('full_3x') };
}

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

export function generateRestaurants(seed: number, anchorMs: number, count: number): RestaurantRecord[] {
  const rng = createPrng(seed, 'restaurants');
  const used = new Set<string>();
  const restaurants: RestaurantRecord[] = [];
  for (let index = 0; index < count; index++) {
    let name = `${rng.pick(RESTAURANT_WORDS_A)} ${rng.pick(RESTAURANT_WORDS_B)}`;
    while (used.has(name)) name = `${name} ${used.size}`;
    used.add(name);
    const id = rng.uuid();
    const cohort = rng.chance(0.4) ? 'qsr' : 'fsr';
    // Whole seconds: the list shows epoch seconds and must round-trip exactly with the ISO forms.
    const createdAtMs = Math.floor((anchorMs - rng.between(200, 1500) * DAY_MS) / 1000) * 1000;
    const updatedAtMs = Math.floor((anchorMs - rng.between(1, 150) * DAY_MS) / 1000) * 1000;
    const slug = slugify(name);
    restaurants.push({
      index,
      id,
      name,
      cuisine: [rng.pick(CUISINES), ...(rng.chance(0.5) ? [rng.pick(CUISINES)] : [])].filter(
        (c, i, all) => all.indexOf(c) === i,
      ),
      cohort,
      price: cohort === 'qsr' ? rng.between(1, 2) : rng.between(2, 4),
      tags: [rng.pick(RESTAURANT_TAGS)].map((tag) => ({ id: rng.uuid(), object: 'tag' as const, name: tag })),
      asset: imageAsset('restaurants', id, Math.floor(anchorMs / 1000) + 7 * 86_400),
      websiteUrl: `https://www.${slug}.example.com`,
      instagramUrl: rng.chance(0.7) ? `https://instagram.com/${slug.replace(/-/g, '')}` : null,
      createdAtMs,
      updatedAtMs,
      removed: false,
    });
  }
  return restaurants;
}

const OPEN_HOURS = new Map<string, readonly OpenHoursPeriod[]>();

/**
 * The weekly periods of a cohort. Shared between locations (20,000 locations, four distinct patterns):
 * an edit replaces a location's array, never changes one in place.
 */
export function openHoursFor(cohort: 'qsr' | 'fsr', lateNight: boolean): OpenHoursPeriod[] {
  const key = `${cohort}:${lateNight}`;
  const known = OPEN_HOURS.get(key);
  if (known) return known as OpenHoursPeriod[];
  const periods: OpenHoursPeriod[] = [];
  for (let day = 0; day < 7; day++) {
    if (cohort === 'fsr' && day === 1) continue; // many full-service places close on Mondays
    if (cohort === 'qsr') periods.push({ day_of_week: day, opens_at: '10:30', closes_at: '22:00' });
    else {
      periods.push({ day_of_week: day, opens_at: '11:30', closes_at: '14:30' });
      periods.push({ day_of_week: day, opens_at: '17:30', closes_at: lateNight ? '01:00' : '22:30' });
    }
  }
  OPEN_HOURS.set(key, Object.freeze(periods.map((p) => Object.freeze(p))));
  return OPEN_HOURS.get(key) as OpenHoursPeriod[];
}

/**
 * Locations per restaurant for a given total: one each, the rest shared out three to one in favour of
 * quick-service chains (largest remainders, so the total is exact and no draw is needed).
 */
export function locationsPerRestaurant(restaurants: RestaurantRecord[], total: number): number[] {
  const weights = restaurants.map((r) => (r.cohort === 'qsr' ? 3 : 1));
  const weightSum = weights.reduce((sum, w) => sum + w, 0);
  const extra = total - restaurants.length;
  const exact = weights.map((w) => (extra * w) / weightSum);
  const counts = exact.map((x) => 1 + Math.floor(x));
  let left = total - counts.reduce((sum, c) => sum + c, 0);
  const byRemainder = exact
    .map((x, i) => ({ i, r: x - Math.floor(x) }))
    .sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of byRemainder) {
    if (left <= 0) break;
    counts[i] = (counts[i] ?? 1) + 1;
    left--;
  }
  return counts;
}

export function generateLocations(
  seed: number,
  anchorMs: number,
  restaurants: RestaurantRecord[],
  neighborhoods: Neighborhood[],
  /** Total locations; null keeps the fixture's 2–4 per quick-service and 1–2 per full-service restaurant. */
  total: number | null = null,
): LocationRecord[] {
  const rng = createPrng(seed, 'locations');
  const planned = total === null ? null : locationsPerRestaurant(restaurants, total);
  const locations: LocationRecord[] = [];
  for (const restaurant of restaurants) {
    const count =
      planned?.[restaurant.index] ?? (restaurant.cohort === 'qsr' ? rng.between(2, 4) : rng.between(1, 2));
    for (let i = 0; i < count; i++) {
      const neighborhoodIndex = rng.int(neighborhoods.length);
      const hood = neighborhoods[neighborhoodIndex];
      const seedHood = NEIGHBORHOODS[neighborhoodIndex];
      if (!hood || !seedHood) throw new Error('neighborhood missing');
      const name = `${restaurant.name} ${hood.name}`;
      const id = rng.uuid();
      const createdAtMs = restaurant.createdAtMs + rng.between(0, 100) * DAY_MS;
      locations.push({
        index: locations.length,
        id,
        restaurantIndex: restaurant.index,
        neighborhoodIndex,
        name,
        slug: slugify(name),
        address: {
          street: `${rng.between(1, 999)} ${rng.pick(STREETS)}`,
          street2: rng.chance(0.2) ? `Suite ${rng.between(100, 400)}` : '',
          city: hood.city,
          state: hood.state,
          zipcode: seedHood.zip,
          country: hood.country,
        },
        coordinate: {
          latitude: Math.round((hood.latitude + (rng.next() - 0.5) * 0.01) * 1e6) / 1e6,
          longitude: Math.round((hood.longitude + (rng.next() - 0.5) * 0.01) * 1e6) / 1e6,
        },
        phoneNumber: `+1${rng.between(201, 989)}${rng.between(2000000, 9999999)}`,
        timeZone: hood.timeZone,
        paymentsEnabled: rng.chance(0.75),
        isClub: rng.chance(0.15),
        reservationUrl: restaurant.cohort === 'fsr' ? `https://reserve.example.com/${slugify(name)}` : null,
        reservationsEnabled: restaurant.cohort === 'fsr',
        googlePlaceId: rng.chance(0.8) ? `ChIJ${rng.alphanumeric(23)}` : null,
        openHours: openHoursFor(restaurant.cohort, rng.chance(0.3)),
        createdAtMs,
        updatedAtMs: Math.max(createdAtMs, anchorMs - rng.between(1, 60) * DAY_MS),
        removed: false,
      });
    }
  }
  return locations;
}
