import { createCheckInIdCodec } from '../check-in-ids.js';
import type { World } from '../world.js';
import { generateChallenges } from './generate-challenges.js';
import { generateCheckIns } from './generate-check-ins.js';
import { generateApp, generateIntents, generateMembers } from './generate-members.js';
import { generateLocations, generateNeighborhoods, generateRestaurants } from './generate-restaurants.js';

export interface WorldOptions {
  seed: number;
  anchorMs: number;
  days: number;
  checkIns: number;
  restaurants?: number;
}

/** Same seed and anchor => the same world, ids included. */
export function generateWorld(options: WorldOptions): World {
  const { seed, anchorMs, days } = options;
  const neighborhoods = generateNeighborhoods(seed);
  const restaurants = generateRestaurants(seed, anchorMs, options.restaurants ?? 24);
  const locations = generateLocations(seed, anchorMs, restaurants, neighborhoods);
  const members = generateMembers(seed, anchorMs, locations);
  const app = generateApp(seed);
  const { store, ongoing } = generateCheckIns(seed, anchorMs, days, options.checkIns, locations, restaurants);
  return {
    seed,
    anchorMs,
    days,
    neighborhoods,
    restaurants,
    locations,
    challenges: generateChallenges(seed, anchorMs, restaurants, locations),
    members,
    intents: new Map(generateIntents(seed, anchorMs, members, app).map((i) => [i.id, i])),
    app,
    checkIns: store,
    checkInIds: createCheckInIdCodec(seed),
    ongoing,
  };
}
