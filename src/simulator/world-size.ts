/**
 * How big the generated world is. Unset counts keep the small fixture world every conformance test
 * and the demo rely on (24 restaurants, their 1–4 locations, 2–4 challenges each, four members,
 * eight intents of which three are pending), id for id.
 */
export interface WorldSize {
  restaurants: number;
  /** Total locations (at least one per restaurant); null: 2–4 per quick-service, 1–2 per full-service restaurant. */
  locations: number | null;
  /** Total challenges, spread evenly over restaurants; null: 2–4 per restaurant. */
  challenges: number | null;
  /** Connected members; the first four are the fixture members (default, expired status, …). */
  members: number;
  /** Pending payment intents; null: the fixture's eight intents (three pending). */
  openIntents: number | null;
}

export const DEFAULT_WORLD_SIZE: WorldSize = {
  restaurants: 24,
  locations: null,
  challenges: null,
  members: 4,
  openIntents: null,
};

/** The network of a deployed partner, as issue 32 sizes it. */
export const PRODUCTION_WORLD_SIZE: WorldSize = {
  restaurants: 5_000,
  locations: 20_000,
  challenges: 10_000,
  members: 10_000,
  openIntents: 1_000,
};

const LIMITS: Record<keyof WorldSize, { min: number; max: number }> = {
  restaurants: { min: 1, max: 100_000 },
  locations: { min: 1, max: 1_000_000 },
  challenges: { min: 0, max: 1_000_000 },
  members: { min: 4, max: 1_000_000 },
  openIntents: { min: 0, max: 1_000_000 },
};

/** The size with defaults filled in; a RangeError naming the setting when a count is out of range. */
export function resolveWorldSize(partial: Partial<WorldSize> = {}): WorldSize {
  const size: WorldSize = { ...DEFAULT_WORLD_SIZE };
  for (const key of Object.keys(LIMITS) as (keyof WorldSize)[]) {
    const value = partial[key];
    if (value === undefined || value === null) continue;
    const { min, max } = LIMITS[key];
    if (!Number.isInteger(value) || value < min || value > max)
      throw new RangeError(`world size ${key} must be a whole number from ${min} to ${max}, got ${value}`);
    size[key] = value;
  }
  if (size.locations !== null && size.locations < size.restaurants)
    throw new RangeError(
      `world size locations (${size.locations}) must be at least restaurants (${size.restaurants}): every restaurant has a location`,
    );
  return size;
}
