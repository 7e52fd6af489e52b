import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseChallenge,
  parseFullLocation,
  parseListedRestaurant,
  parseReducedLocation,
} from '../../../src/records/index.js';
import { challengeRow } from '../../../src/warehouse/challenges.js';
import {
  locationContentHash,
  locationFields,
  mergeLocationColumns,
  mergeLocationRaw,
  type LocationColumns,
} from '../../../src/warehouse/locations.js';
import { restaurantContentHash } from '../../../src/warehouse/restaurants.js';

const restaurantRaw = {
  id: '6f1c2a9e-1111-4c1a-9a1b-000000000001',
  object: 'restaurant',
  name: 'Salt House',
  cuisine: ['korean'],
  cohort: 'fsr',
  price: 2,
  tags: [],
  asset: {
    preview_1x: 'https://img.example/r/1/p.jpg?expires=1700000000',
    web_2x: 'https://img.example/r/1/w.jpg?expires=1700000000',
    full_3x: 'https://img.example/r/1/f.jpg?expires=1700000000',
  },
  website_url: 'https://salt.example',
  instagram_url: null,
  created_at: 1_700_000_000,
  updated_at: 1_700_000_100,
};

function listed(raw: unknown) {
  const result = parseListedRestaurant(raw);
  if (!result.ok) throw new Error(result.rejection.reason);
  return result.record;
}

describe('restaurant content hash', () => {
  const base = restaurantContentHash(listed(restaurantRaw));
  it('ignores a new image-URL expiry', () => {
    const resigned = {
      ...restaurantRaw,
      asset: Object.fromEntries(
        Object.entries(restaurantRaw.asset).map(([k, v]) => [k, v.replace('1700000000', '1800000000')]),
      ),
    };
    expect(restaurantContentHash(listed(resigned))).toBe(base);
  });
  it('ignores updated_at alone', () => {
    expect(restaurantContentHash(listed({ ...restaurantRaw, updated_at: 1_800_000_000 }))).toBe(base);
  });
  it.each([
    ['name', 'Pepper House'],
    ['price', 3],
    ['instagram_url', 'https://instagram.example/salt'],
    ['created_at', 1_600_000_000],
  ])('changes with %s', (field, value) => {
    expect(restaurantContentHash(listed({ ...restaurantRaw, [field]: value }))).not.toBe(base);
  });
  it('changes when an image path changes', () => {
    const moved = {
      ...restaurantRaw,
      asset: { ...restaurantRaw.asset, web_2x: 'https://img.example/r/1/new.jpg?expires=1' },
    };
    expect(restaurantContentHash(listed(moved))).not.toBe(base);
  });
});

const neighborhood = {
  id: '6f1c2a9e-2222-4c1a-9a1b-000000000001',
  object: 'neighborhood',
  name: 'SoHo',
  region: 'NYC',
};
const reducedRaw = {
  id: '6f1c2a9e-3333-4c1a-9a1b-000000000001',
  object: 'location',
  name: 'Salt House SoHo',
  restaurant: { id: restaurantRaw.id, object: 'restaurant', name: 'Salt House' },
  neighborhood,
  address: { street: '1 Main', street2: '', city: 'New York', state: 'NY', zipcode: '10012', country: 'US' },
  coordinate: { latitude: 40.72, longitude: -74.0 },
  time_zone: 'America/New_York',
  payments_enabled: true,
  is_club: false,
};
const fullRaw = {
  ...reducedRaw,
  restaurant: { ...restaurantRaw, created_at: '2023-11-14T22:13:20Z', updated_at: '2023-11-14T22:15:00Z' },
  slug: 'salt-house-soho',
  phone_number: '+12125550100',
  reservation_url: 'https://book.example/salt',
  reservations_enabled: true,
  google_place_id: 'ChIJ123',
  created_at: '2024-01-01T00:00:00Z',
  updated_at: '2024-02-01T00:00:00Z',
};

function parsed<T>(result: { ok: true; record: T } | { ok: false; rejection: { reason: string } }): T {
  if (!result.ok) throw new Error(result.rejection.reason);
  return result.record;
}

describe('location merge', () => {
  const full = parsed(parseFullLocation(fullRaw));
  const fullColumns = mergeLocationColumns(undefined, locationFields(full));

  it('the reduced form never nulls what the full form gave', () => {
    const reduced = parsed(parseReducedLocation({ ...reducedRaw, is_club: true }));
    const merged = mergeLocationColumns(fullColumns, locationFields(reduced));
    expect(merged).toEqual({ ...fullColumns, is_club: true });
    expect(locationContentHash(merged)).not.toBe(locationContentHash(fullColumns));
  });

  it('an unchanged reduced form gives the same hash as the full row (no version churn)', () => {
    const reduced = parsed(parseReducedLocation(reducedRaw));
    expect(locationContentHash(mergeLocationColumns(fullColumns, locationFields(reduced)))).toBe(
      locationContentHash(fullColumns),
    );
  });

  it('bookkeeping columns of a stored row never enter the merged content', () => {
    const stored = { ...fullColumns, id: full.id, raw: fullRaw, deleted_at: null, last_seen_at: new Date() };
    expect(locationContentHash(mergeLocationColumns(stored, {}))).toBe(locationContentHash(fullColumns));
  });

  it('the raw record keeps the full form keys and embedded restaurant under a reduced refresh', () => {
    const reduced = parsed(parseReducedLocation({ ...reducedRaw, name: 'Renamed' }));
    const raw = mergeLocationRaw(fullRaw, reduced) as Record<string, unknown>;
    expect(raw['slug']).toBe('salt-house-soho');
    expect(raw['name']).toBe('Renamed');
    expect(raw['restaurant']).toEqual(fullRaw.restaurant);
  });

  it('a key new in the reduced form’s restaurant is added to the richer one, which keeps its own values', () => {
    const restaurant = {
      ...(reducedRaw.restaurant as Record<string, unknown>),
      michelin_stars: 1,
      name: 'Other',
    };
    const reduced = parsed(parseReducedLocation({ ...reducedRaw, restaurant }));
    const raw = mergeLocationRaw(fullRaw, reduced) as Record<string, unknown>;
    expect(raw['restaurant']).toEqual({ ...fullRaw.restaurant, michelin_stars: 1 });
  });

  it('property: merging any subset of fields keeps every other column as it was', () => {
    const keys = Object.keys(fullColumns) as (keyof LocationColumns)[];
    fc.assert(
      fc.property(fc.subarray(keys), fc.constantFrom<unknown>('x', 1, true), (subset, value) => {
        const incoming = Object.fromEntries(subset.map((k) => [k, value])) as Partial<LocationColumns>;
        const merged = mergeLocationColumns(fullColumns, incoming);
        for (const key of keys) expect(merged[key]).toEqual(subset.includes(key) ? value : fullColumns[key]);
      }),
    );
  });
});

describe('challenge row', () => {
  const raw = {
    id: '6f1c2a9e-4444-4c1a-9a1b-000000000001',
    object: 'challenge',
    type: 'PAYMENT',
    title: 'Spend',
    description: 'Spend to earn',
    image: null,
    threshold: {
      spend_threshold: { value: '340282366920938463463374607431768211457', currency: 'SVC' },
      minimum_spend: { value: '0001000', currency: 'Svc' },
    },
    token_reward: { value: '18446744073709551617', currency: 'SVC' },
    start_time: '2026-01-01T00:00:00+01:00',
    end_time: null,
    terms: ['One per member'],
    accepted_currencies: ['SVC', 'usd'],
    created_at: '2025-12-01T00:00:00Z',
    updated_at: '2025-12-02T00:00:00Z',
  };
  const restaurantId = restaurantRaw.id;
  const row = challengeRow(parsed(parseChallenge(raw)), restaurantId, new Date());

  it('keeps amounts exact, currencies lower-case, offsets converted', () => {
    expect(row.token_reward_value).toBe('18446744073709551617');
    expect(row.token_reward_currency).toBe('svc');
    expect(row.spend_threshold_value).toBe('340282366920938463463374607431768211457');
    expect(row.minimum_spend_value).toBe('1000');
    expect(row.minimum_spend_currency).toBe('svc');
    expect(row.accepted_currencies).toEqual(['svc', 'usd']);
    expect(row.start_time).toEqual(new Date('2025-12-31T23:00:00Z'));
    expect(JSON.parse(row.threshold)).toEqual({
      spend_threshold: { value: '340282366920938463463374607431768211457', currency: 'svc' },
      minimum_spend: { value: '1000', currency: 'svc' },
    });
  });

  it('hash ignores updated_at and currency casing, not content', () => {
    const hashOf = (r: unknown) =>
      challengeRow(parsed(parseChallenge(r)), restaurantId, new Date()).content_hash;
    expect(hashOf({ ...raw, updated_at: '2026-05-05T00:00:00Z' })).toBe(row.content_hash);
    expect(hashOf({ ...raw, token_reward: { value: '18446744073709551617', currency: 'svc' } })).toBe(
      row.content_hash,
    );
    expect(hashOf({ ...raw, token_reward: { value: '18446744073709551618', currency: 'SVC' } })).not.toBe(
      row.content_hash,
    );
    expect(hashOf({ ...raw, type: 'NEW_KIND' })).not.toBe(row.content_hash);
  });
});
