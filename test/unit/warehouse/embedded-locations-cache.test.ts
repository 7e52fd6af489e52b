import { describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type Location } from '../../../src/records/index.js';
import {
  EmbeddedLocationsCache,
  embeddedLocationsCacheFor,
} from '../../../src/warehouse/embedded-locations-cache.js';
import { feedCheckIn } from '../records/fixtures.js';

function location(name: string): Location {
  const raw = feedCheckIn();
  (raw['location'] as Record<string, unknown>)['name'] = name;
  const parsed = parseFeedCheckIn(raw);
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  return parsed.record.location;
}

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24) + seconds * 1000);

describe('EmbeddedLocationsCache: embedded locations are written once per content and TTL', () => {
  it('a location written (and committed) is not written again with the same content', () => {
    const cache = new EmbeddedLocationsCache(300_000);
    const bar = location('Bar');
    expect(cache.unwritten([bar, bar], at(0))).toHaveLength(1); // one per id
    cache.remember([bar], at(0));
    expect(cache.unwritten([bar], at(10))).toEqual([]);
  });

  it('a change of content, or an entry older than the TTL, is written again', () => {
    const cache = new EmbeddedLocationsCache(300_000);
    cache.remember([location('Bar')], at(0));
    expect(cache.unwritten([location('Renamed Bar')], at(10))).toHaveLength(1);
    expect(cache.unwritten([location('Bar')], at(300))).toHaveLength(1);
  });

  it('nothing is remembered unless the caller says the write committed; each database has its own cache', () => {
    const cache = new EmbeddedLocationsCache();
    expect(cache.unwritten([location('Bar')], at(0))).toHaveLength(1);
    expect(cache.unwritten([location('Bar')], at(1))).toHaveLength(1);
    const one = {};
    const other = {};
    embeddedLocationsCacheFor(one).remember([location('Bar')], at(0));
    expect(embeddedLocationsCacheFor(one).unwritten([location('Bar')], at(1))).toEqual([]);
    expect(embeddedLocationsCacheFor(other).unwritten([location('Bar')], at(1))).toHaveLength(1);
  });
});
