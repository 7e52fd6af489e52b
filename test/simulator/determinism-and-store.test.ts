import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createCheckInIdCodec } from '../../src/simulator/check-in-ids.js';
import { CheckInStore } from '../../src/simulator/check-in-store.js';
import { startSimulator } from '../../src/simulator/index.js';
import { ANCHOR, call } from './sim-fixture.js';

describe('deterministic data', () => {
  test('same seed + same anchor => same data, ids included; another seed differs', async () => {
    const options = { anchor: ANCHOR, checkIns: 3_000, days: 5, clock: { now: () => ANCHOR } };
    const a = await startSimulator({ ...options, seed: 5 });
    const b = await startSimulator({ ...options, seed: 5 });
    const c = await startSimulator({ ...options, seed: 6 });
    try {
      const snapshot = async (sim: typeof a) => ({
        feed: (await call(sim, '/check_ins?page_size=200&page=3', { apiKey: sim.credentials.apiKey })).text,
        restaurants: (await call(sim, '/restaurants?page_size=100', { apiKey: sim.credentials.apiKey })).text,
        intents: sim.control.intents.list(),
        members: sim.control.members.list(),
      });
      const [sa, sb, sc] = [await snapshot(a), await snapshot(b), await snapshot(c)];
      expect(sb).toEqual(sa);
      expect(sc.feed).not.toEqual(sa.feed);
      expect(sc.restaurants).not.toEqual(sa.restaurants);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});

describe('check-in id codec', () => {
  test('decode(encode(seq)) = seq for every sequence number', () => {
    const codec = createCheckInIdCodec(99);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (seq) => codec.decode(codec.encode(seq)) === seq),
    );
  });

  test('random UUIDs do not decode to rows; ids differ per seed', () => {
    const codec = createCheckInIdCodec(99);
    fc.assert(fc.property(fc.uuid({ version: 4 }), (id) => codec.decode(id) === null));
    expect(createCheckInIdCodec(1).encode(7)).not.toBe(codec.encode(7));
  });
});

describe('check-in store', () => {
  test('pages equal a naive newest-first filter, for any inserts (in or out of order) and ranges', () => {
    // A small time domain makes ties and boundary hits (created_at == from or == to) common.
    const row = fc.record({
      at: fc.integer({ min: 0, max: 12 }),
      location: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(
        fc.array(row, { maxLength: 80, size: 'medium' }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 14 }),
        fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 8 }),
        (rows, from, to, location, pageSize, page) => {
          const store = new CheckInStore(4, (l) => l % 2);
          rows.forEach((r) => store.add(r.at, null, r.location, 0));
          // Reference: stable sort by created_at, ties by insertion order; newest first.
          const expected = rows
            .map((r, seq) => ({ ...r, seq }))
            .filter((r) => r.at >= from && r.at < to && (location === null || r.location === location))
            .sort((x, y) => x.at - y.at || x.seq - y.seq)
            .reverse();
          const result = store.page(
            {
              scope: location === null ? { kind: 'all' } : { kind: 'location', index: location },
              fromMs: from,
              toMs: to,
            },
            page,
            pageSize,
          );
          expect(result.totalCount).toBe(expected.length);
          expect(result.seqs).toEqual(
            expected.slice(page * pageSize, (page + 1) * pageSize).map((r) => r.seq),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
