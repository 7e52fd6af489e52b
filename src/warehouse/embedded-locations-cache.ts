import { contentHash, type Location } from '../records/index.js';

/**
 * The locations embedded in feed pages (with their restaurant and neighborhood) that this process
 * has written, by content, for `ttlMs`. A backfill meets the same few dozen locations on every
 * page: writing them again costs most of a page's statements and changes nothing. A location is
 * written again when its content changes or its entry is older than `ttlMs`, so its
 * `last_seen_at` lags the feed by at most that. Entries are added only after the page's
 * transaction committed (a rolled-back write is never remembered).
 */
export class EmbeddedLocationsCache {
  readonly #written = new Map<string, { hash: string; atMs: number }>();
  /** Hashes computed by `unwritten`, so `remember` does not hash the same records again. */
  readonly #hashes = new WeakMap<Location, string>();

  constructor(
    private readonly ttlMs = 300_000,
    private readonly maxEntries = 100_000,
  ) {}

  /** The locations of a page that still need writing (one per id). */
  unwritten(locations: readonly Location[], seenAt: Date): Location[] {
    const byId = new Map(locations.map((location) => [location.id, location]));
    return [...byId.values()].filter((location) => {
      const hash = this.#hashOf(location);
      const entry = this.#written.get(location.id);
      return entry === undefined || entry.hash !== hash || seenAt.getTime() - entry.atMs >= this.ttlMs;
    });
  }

  remember(locations: readonly Location[], seenAt: Date): void {
    if (this.#written.size + locations.length > this.maxEntries) this.#written.clear();
    for (const location of locations) {
      this.#written.set(location.id, { hash: this.#hashOf(location), atMs: seenAt.getTime() });
    }
  }

  #hashOf(location: Location): string {
    let hash = this.#hashes.get(location);
    if (hash === undefined) {
      hash = contentHash(location.raw);
      this.#hashes.set(location, hash);
    }
    return hash;
  }
}

const caches = new WeakMap<object, EmbeddedLocationsCache>();

/** One cache per database handle: two warehouses in one process never share entries. */
export function embeddedLocationsCacheFor(db: object): EmbeddedLocationsCache {
  let cache = caches.get(db);
  if (cache === undefined) {
    cache = new EmbeddedLocationsCache();
    caches.set(db, cache);
  }
  return cache;
}
