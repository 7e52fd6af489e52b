import type { SimContext } from './context.js';
import { CHALLENGE_TYPES, thresholdFor } from './data/generate-challenges.js';
import { imageAsset, slugify } from './data/generate-restaurants.js';
import { challengeForm, locationReducedForm, restaurantEmbeddedForm } from './forms.js';
import {
  addChallengeRecord,
  addLocationRecord,
  addRestaurantRecord,
  removeChallengeRecord,
} from './world-index.js';
import {
  findLocation,
  findRestaurant,
  type ChallengeType,
  type LocationRecord,
  type OpenHoursPeriod,
  type RestaurantRecord,
} from './world.js';

/** Control of the discovery catalogue: restaurants, locations and challenges. */

export interface RestaurantInput {
  name?: string;
  cohort?: 'qsr' | 'fsr';
  price?: number;
  cuisine?: string[];
  instagramUrl?: string | null;
}

export interface LocationInput {
  name?: string;
  /** Neighborhood name; default the first one. */
  neighborhood?: string;
  paymentsEnabled?: boolean;
  isClub?: boolean;
  phoneNumber?: string;
  /** Replaces the weekly open hours (`GET /locations/{id}/open_hours`); the location itself is unchanged. */
  openHours?: OpenHoursPeriod[];
}

export interface ChallengeInput {
  type?: ChallengeType;
  title?: string;
  description?: string;
  /** Smallest-unit big-integer string. */
  tokenReward?: string;
  locationIds?: string[] | null;
}

export interface CatalogControl {
  restaurants: {
    list(): Record<string, unknown>[];
    add(input?: RestaurantInput): { id: string };
    update(id: string, patch: RestaurantInput): void;
    remove(id: string): void;
  };
  locations: {
    list(): Record<string, unknown>[];
    add(restaurantId: string, input?: LocationInput): { id: string };
    update(id: string, patch: LocationInput): void;
    remove(id: string): void;
  };
  challenges: {
    list(restaurantId?: string): Record<string, unknown>[];
    add(restaurantId: string, input?: ChallengeInput): { id: string };
    update(id: string, patch: ChallengeInput): void;
    remove(id: string): void;
  };
}

export function createCatalogControl(ctx: SimContext): CatalogControl {
  return {
    restaurants: restaurantControl(ctx),
    locations: locationControl(ctx),
    challenges: challengeControl(ctx),
  };
}

/** Now, to the whole second: the precision a restaurant's timestamps are kept at. */
const nowSeconds = (ctx: SimContext): number => Math.floor(ctx.clock.nowMs() / 1000) * 1000;

function restaurantOf(ctx: SimContext, id: string): RestaurantRecord {
  const r = findRestaurant(ctx.world, id);
  if (!r) throw new RangeError(`no restaurant ${id}`);
  return r;
}

function restaurantControl(ctx: SimContext): CatalogControl['restaurants'] {
  const { world, clock } = ctx;
  const { truth } = world;
  const restaurant = (id: string): RestaurantRecord => restaurantOf(ctx, id);
  return {
    list: () => world.restaurants.filter((r) => !r.removed).map(restaurantEmbeddedForm),
    add: (input = {}) => {
      const id = ctx.runtimeIds.uuid();
      const name = input.name ?? `New Restaurant ${world.restaurants.length + 1}`;
      const at = nowSeconds(ctx);
      addRestaurantRecord(world, {
        index: world.restaurants.length,
        id,
        name,
        cuisine: input.cuisine ?? ['american'],
        cohort: input.cohort ?? 'fsr',
        price: input.price ?? 2,
        tags: [],
        asset: imageAsset('restaurants', id, Math.floor(at / 1000) + 7 * 86_400),
        websiteUrl: `https://www.${slugify(name)}.example.com`,
        instagramUrl: input.instagramUrl ?? null,
        createdAtMs: at,
        updatedAtMs: at,
        removed: false,
      });
      truth.record('restaurant', id, clock.nowMs());
      return { id };
    },
    update: (id, patch) => {
      const r = restaurant(id);
      if (patch.name !== undefined) r.name = patch.name;
      if (patch.cohort !== undefined) r.cohort = patch.cohort;
      if (patch.price !== undefined) r.price = patch.price;
      if (patch.cuisine !== undefined) r.cuisine = patch.cuisine;
      if (patch.instagramUrl !== undefined) r.instagramUrl = patch.instagramUrl;
      r.updatedAtMs = Math.max(r.updatedAtMs + 1000, nowSeconds(ctx));
      truth.record('restaurant', id, clock.nowMs());
    },
    remove: (id) => {
      const r = restaurant(id);
      const at = clock.nowMs();
      r.removed = true;
      truth.record('restaurant', id, at);
      for (const l of world.locations) {
        if (l.restaurantIndex !== r.index || l.removed) continue;
        l.removed = true;
        truth.record('location', l.id, at);
      }
    },
  };
}

function locationControl(ctx: SimContext): CatalogControl['locations'] {
  const { world, clock } = ctx;
  const { truth } = world;
  const restaurant = (id: string): RestaurantRecord => restaurantOf(ctx, id);
  const location = (id: string): LocationRecord => {
    const l = findLocation(world, id);
    if (!l) throw new RangeError(`no location ${id}`);
    return l;
  };
  return {
    list: () => world.locations.filter((l) => !l.removed).map((l) => locationReducedForm(world, l)),
    add: (restaurantId, input = {}) => {
      const r = restaurant(restaurantId);
      const neighborhoodIndex = Math.max(
        0,
        world.neighborhoods.findIndex((n) => n.name === input.neighborhood),
      );
      const hood = world.neighborhoods[neighborhoodIndex];
      if (!hood) throw new RangeError('no neighborhood');
      const id = ctx.runtimeIds.uuid();
      const name = input.name ?? `${r.name} ${hood.name}`;
      const at = clock.nowMs();
      addLocationRecord(world, {
        index: world.locations.length,
        id,
        restaurantIndex: r.index,
        neighborhoodIndex,
        name,
        slug: slugify(name),
        address: {
          street: '1 Main St',
          street2: '',
          city: hood.city,
          state: hood.state,
          zipcode: '00000',
          country: hood.country,
        },
        coordinate: { latitude: hood.latitude, longitude: hood.longitude },
        phoneNumber: input.phoneNumber ?? '+12125550000',
        timeZone: hood.timeZone,
        paymentsEnabled: input.paymentsEnabled ?? true,
        isClub: input.isClub ?? false,
        reservationUrl: null,
        reservationsEnabled: false,
        googlePlaceId: null,
        openHours: [],
        createdAtMs: at,
        updatedAtMs: at,
        removed: false,
      });
      truth.record('location', id, at);
      truth.record('location.open_hours', id, at);
      return { id };
    },
    update: (id, patch) => {
      const l = location(id);
      if (patch.name !== undefined) l.name = patch.name;
      if (patch.paymentsEnabled !== undefined) l.paymentsEnabled = patch.paymentsEnabled;
      if (patch.isClub !== undefined) l.isClub = patch.isClub;
      if (patch.phoneNumber !== undefined) l.phoneNumber = patch.phoneNumber;
      if (patch.openHours !== undefined) {
        l.openHours = patch.openHours.map((period) => ({ ...period }));
        truth.record('location.open_hours', id, clock.nowMs());
      }
      const { openHours: _hours, ...fields } = patch;
      if (Object.values(fields).every((value) => value === undefined)) return;
      l.updatedAtMs = Math.max(l.updatedAtMs + 1, clock.nowMs());
      truth.record('location', id, clock.nowMs());
    },
    remove: (id) => {
      location(id).removed = true;
      truth.record('location', id, clock.nowMs());
    },
  };
}

function challengeControl(ctx: SimContext): CatalogControl['challenges'] {
  const { world, clock } = ctx;
  const { truth } = world;
  const restaurant = (id: string): RestaurantRecord => restaurantOf(ctx, id);
  const challenge = (id: string) => {
    const c = world.challenges.find((x) => x.id === id);
    if (!c) throw new RangeError(`no challenge ${id}`);
    return c;
  };
  return {
    list: (restaurantId) =>
      world.challenges
        .filter((c) => restaurantId === undefined || c.restaurantId === restaurantId)
        .map(challengeForm),
    add: (restaurantId, input = {}) => {
      const r = restaurant(restaurantId);
      const type = input.type ?? 'DINES';
      if (!CHALLENGE_TYPES.includes(type)) throw new RangeError(`unknown challenge type ${type}`);
      const own = world.locations.filter((l) => l.restaurantIndex === r.index && !l.removed).map((l) => l.id);
      const id = ctx.runtimeIds.uuid();
      const at = clock.nowMs();
      addChallengeRecord(world, {
        id,
        restaurantId,
        locationIds: input.locationIds ?? null,
        type,
        title: input.title ?? `${r.name}: ${type.toLowerCase()} challenge`,
        description: input.description ?? 'Added by the simulator control.',
        image: null,
        threshold: thresholdFor(type, ctx.runtimeIds, input.locationIds ?? own),
        tokenReward: { value: input.tokenReward ?? '1000000000000000000', currency: 'SVC' },
        startTimeMs: at,
        endTimeMs: null,
        terms: ['One reward per member.'],
        acceptedCurrencies: ['SVC'],
        createdAtMs: at,
        updatedAtMs: at,
      });
      truth.record('restaurant.challenges', r.id, at);
      return { id };
    },
    update: (id, patch) => {
      const c = challenge(id);
      if (patch.title !== undefined) c.title = patch.title;
      if (patch.description !== undefined) c.description = patch.description;
      if (patch.tokenReward !== undefined) c.tokenReward = { ...c.tokenReward, value: patch.tokenReward };
      if (patch.locationIds !== undefined) c.locationIds = patch.locationIds;
      c.updatedAtMs = Math.max(c.updatedAtMs + 1, clock.nowMs());
      truth.record('restaurant.challenges', c.restaurantId, clock.nowMs());
    },
    remove: (id) => {
      const removed = removeChallengeRecord(world, id);
      if (!removed) throw new RangeError(`no challenge ${id}`);
      truth.record('restaurant.challenges', removed.restaurantId, clock.nowMs());
    },
  };
}
