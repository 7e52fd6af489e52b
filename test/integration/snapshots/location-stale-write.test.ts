import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFeedCheckIn, type Location } from '../../../src/records/index.js';
import { writeLocations } from '../../../src/warehouse/locations.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { feedCheckIn } from '../../unit/records/fixtures.js';

function locationNamed(name: string): Location {
  const raw = feedCheckIn();
  (raw['location'] as Record<string, unknown>)['name'] = name;
  const parsed = parseFeedCheckIn(raw);
  if (!parsed.ok) throw new Error(parsed.rejection.reason);
  return parsed.record.location;
}

describe('location writes: a slower read never overwrites a newer one', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('location_stale');
  });
  afterAll(async () => {
    await t?.drop();
  });

  const T1 = new Date('2026-11-20T10:00:00Z');
  const T2 = new Date('2026-11-20T10:00:05Z');

  it('an older feed page written after a newer GET /locations/{id} read leaves that read and its history as they are', async () => {
    // The GET read started at T2 and committed first; a slow feed page whose request started at T1 commits after it.
    await t.db
      .transaction()
      .execute((trx) => writeLocations(trx, [locationNamed('Renamed Bar')], T2, { refreshed: true }));
    const stale = await t.db
      .transaction()
      .execute((trx) => writeLocations(trx, [locationNamed('Old Name Bar')], T1, { refreshed: false }));
    expect(stale).toEqual({ written: 0, newVersions: 0 });
    const row = await t.db
      .selectFrom('rewards.locations')
      .select(['name', 'last_seen_at'])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ name: 'Renamed Bar', last_seen_at: T2 });
    const history = await t.db
      .selectFrom('rewards.locations_history')
      .select(['valid_from', 'valid_to'])
      .execute();
    expect(history).toEqual([{ valid_from: T2, valid_to: null }]);
  });

  it('a newer read still applies, and opens a version when the content changed', async () => {
    const T3 = new Date('2026-11-20T10:01:00Z');
    const newer = await t.db
      .transaction()
      .execute((trx) => writeLocations(trx, [locationNamed('Newest Bar')], T3, { refreshed: false }));
    expect(newer.newVersions).toBe(1);
    const row = await t.db.selectFrom('rewards.locations').select('name').executeTakeFirstOrThrow();
    expect(row.name).toBe('Newest Bar');
  });
});
