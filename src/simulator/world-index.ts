import type {
  ChallengeRecord,
  IntentRecord,
  LocationRecord,
  MemberRecord,
  RestaurantRecord,
  WalletRecord,
} from './world.js';

/**
 * Lookups by id, so a request costs the same at 10,000 members and 20,000 locations as at four and
 * fifty. Records enter the world only through the add/remove functions below, which keep the maps in
 * step with the arrays.
 */
export interface WorldIndex {
  memberById: Map<string, MemberRecord>;
  walletById: Map<string, { wallet: WalletRecord; owner: MemberRecord }>;
  /** Removed restaurants and locations stay here: their check-ins stay filterable. */
  restaurantById: Map<string, RestaurantRecord>;
  locationById: Map<string, LocationRecord>;
  challengesByRestaurant: Map<string, ChallengeRecord[]>;
  /** Creation order (the intents Map keeps it too, but cannot be read from the newest end). */
  intentsInOrder: IntentRecord[];
}

interface IndexedRecords {
  members: MemberRecord[];
  restaurants: RestaurantRecord[];
  locations: LocationRecord[];
  challenges: ChallengeRecord[];
  intents: Map<string, IntentRecord>;
  index: WorldIndex;
}

export function emptyIndex(): WorldIndex {
  return {
    memberById: new Map(),
    walletById: new Map(),
    restaurantById: new Map(),
    locationById: new Map(),
    challengesByRestaurant: new Map(),
    intentsInOrder: [],
  };
}

/** Index of records generated as plain arrays. */
export function indexRecords(world: Omit<IndexedRecords, 'index'>): WorldIndex {
  const index = emptyIndex();
  for (const member of world.members) indexMember(index, member);
  for (const restaurant of world.restaurants) index.restaurantById.set(restaurant.id, restaurant);
  for (const location of world.locations) index.locationById.set(location.id, location);
  for (const challenge of world.challenges) challengesOf(index, challenge.restaurantId).push(challenge);
  index.intentsInOrder.push(...world.intents.values());
  return index;
}

function indexMember(index: WorldIndex, member: MemberRecord): void {
  index.memberById.set(member.id, member);
  for (const wallet of member.wallets) index.walletById.set(wallet.id, { wallet, owner: member });
}

function challengesOf(index: WorldIndex, restaurantId: string): ChallengeRecord[] {
  let list = index.challengesByRestaurant.get(restaurantId);
  if (!list) {
    list = [];
    index.challengesByRestaurant.set(restaurantId, list);
  }
  return list;
}

export function addMemberRecord(world: IndexedRecords, member: MemberRecord): void {
  world.members.push(member);
  indexMember(world.index, member);
}

export function addRestaurantRecord(world: IndexedRecords, restaurant: RestaurantRecord): void {
  world.restaurants.push(restaurant);
  world.index.restaurantById.set(restaurant.id, restaurant);
}

export function addLocationRecord(world: IndexedRecords, location: LocationRecord): void {
  world.locations.push(location);
  world.index.locationById.set(location.id, location);
}

export function addChallengeRecord(world: IndexedRecords, challenge: ChallengeRecord): void {
  world.challenges.push(challenge);
  challengesOf(world.index, challenge.restaurantId).push(challenge);
}

/** Removes a challenge from the world; null when there is none with that id. */
export function removeChallengeRecord(world: IndexedRecords, id: string): ChallengeRecord | null {
  const at = world.challenges.findIndex((c) => c.id === id);
  const challenge = world.challenges[at];
  if (!challenge) return null;
  world.challenges.splice(at, 1);
  const own = world.index.challengesByRestaurant.get(challenge.restaurantId);
  const ownAt = own?.indexOf(challenge) ?? -1;
  if (own && ownAt >= 0) own.splice(ownAt, 1);
  return challenge;
}

export function addIntentRecord(world: IndexedRecords, intent: IntentRecord): void {
  world.intents.set(intent.id, intent);
  world.index.intentsInOrder.push(intent);
}
