import { DEFAULT_CHANGE_SETTINGS, type MemberActivityClass } from '../changes/change-settings.js';
import { createCheckInIdCodec } from '../check-in-ids.js';
import { Timeline } from '../timeline.js';
import { initialChangeAt } from '../truth-initial.js';
import { TruthLog, type TruthLogOptions } from '../truth-log.js';
import { indexRecords } from '../world-index.js';
import { resolveWorldSize, type WorldSize } from '../world-size.js';
import type { World } from '../world.js';
import { generateChallenges } from './generate-challenges.js';
import { generateCheckIns } from './generate-check-ins.js';
import { generateCrowd } from './generate-crowd.js';
import { generateIntents } from './generate-intents.js';
import { generateApp, generateMembers } from './generate-members.js';
import { generateLocations, generateNeighborhoods, generateRestaurants } from './generate-restaurants.js';
import { utcOffsetMinutes, type Rhythm } from './rhythm.js';

export interface WorldOptions {
  seed: number;
  anchorMs: number;
  days: number;
  checkIns: number;
  /** How visits spread over a local day (default daily). */
  rhythm?: Rhythm;
  /** Counts of restaurants, locations, challenges, members and open intents (unset: the fixture world). */
  size?: Partial<WorldSize>;
  /** Activity classes the members' visit history follows (default: the change model's). */
  memberActivity?: readonly MemberActivityClass[];
  truth?: TruthLogOptions;
}

/** Same seed, anchor and size => the same world, ids included. */
export function generateWorld(options: WorldOptions): World {
  const { seed, anchorMs, days } = options;
  const rhythm = options.rhythm ?? 'daily';
  const size = resolveWorldSize(options.size);
  const neighborhoods = generateNeighborhoods(seed);
  const restaurants = generateRestaurants(seed, anchorMs, size.restaurants);
  const locations = generateLocations(seed, anchorMs, restaurants, neighborhoods, size.locations);
  const members = generateMembers(seed, anchorMs, locations);
  if (size.members > members.length) {
    members.push(
      ...generateCrowd({
        seed,
        anchorMs,
        days,
        from: members.length,
        to: size.members,
        locations,
        neighborhoodOffsets: neighborhoods.map((n) => utcOffsetMinutes(n.timeZone, anchorMs)),
        activity: options.memberActivity ?? DEFAULT_CHANGE_SETTINGS.memberActivity,
        rhythm,
      }),
    );
  }
  const app = generateApp(seed);
  const { store, ongoing } = generateCheckIns(
    seed,
    anchorMs,
    days,
    options.checkIns,
    locations,
    restaurants,
    rhythm,
  );
  const challenges = generateChallenges(seed, anchorMs, restaurants, locations, size.challenges);
  const intents = new Map(
    generateIntents(seed, anchorMs, members, app, size.openIntents).map((i) => [i.id, i]),
  );
  const world: World = {
    seed,
    anchorMs,
    days,
    rhythm,
    neighborhoods,
    restaurants,
    locations,
    challenges,
    members,
    intents,
    app,
    checkIns: store,
    checkInIds: createCheckInIdCodec(seed),
    ongoing,
    index: indexRecords({ members, restaurants, locations, challenges, intents }),
    truth: new TruthLog((kind, id) => initialChangeAt(world, kind, id), options.truth),
    timeline: new Timeline(),
  };
  return world;
}
