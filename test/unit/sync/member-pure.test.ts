import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { afterMemberCheckInPage } from '../../../src/sync/member-check-in-paging.js';
import { applyPiiPolicy, PII_FIELDS } from '../../../src/sync/member-pii.js';

const KEY = Buffer.alloc(32, 7);
const atMs = (minutes: number) => Date.UTC(2026, 10, 1) + minutes * 60_000;
const at = (minutes: number) => new Date(atMs(minutes));

describe("afterMemberCheckInPage: when an incremental read of a member's visits stops", () => {
  const base = { known: new Set(['a', 'b', 'c']), oldestOngoingStored: null, lastPage: false };

  it('a page with a new visit: read on', () => {
    expect(afterMemberCheckInPage({ ...base, ids: ['new', 'a'], oldestOnPageMs: atMs(10) })).toBe('next');
  });
  it('a page of known visits with no ongoing one stored below it: done', () => {
    expect(afterMemberCheckInPage({ ...base, ids: ['a', 'b'], oldestOnPageMs: atMs(10) })).toBe('done');
  });
  it('known visits, but an ongoing one stored older than the page: read on to see whether it ended', () => {
    expect(
      afterMemberCheckInPage({
        ...base,
        ids: ['a', 'b'],
        oldestOnPageMs: atMs(10),
        oldestOngoingStored: at(5),
      }),
    ).toBe('next');
    expect(
      afterMemberCheckInPage({
        ...base,
        ids: ['a', 'b'],
        oldestOnPageMs: atMs(5),
        oldestOngoingStored: at(5),
      }),
    ).toBe('done');
  });
  it('the last page or an empty one: done', () => {
    expect(afterMemberCheckInPage({ ...base, ids: ['new'], oldestOnPageMs: atMs(1), lastPage: true })).toBe(
      'done',
    );
    expect(afterMemberCheckInPage({ ...base, ids: [], oldestOnPageMs: undefined })).toBe('done');
  });
  it('property: a page holding an id not stored is never the last one read (unless the API says so)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'x', 'y'), { minLength: 1 }),
        fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
        fc.integer({ min: 0, max: 100 }),
        (ids, ongoing, oldest) => {
          const decision = afterMemberCheckInPage({
            ...base,
            ids,
            oldestOnPageMs: atMs(oldest),
            oldestOngoingStored: ongoing === null ? null : at(ongoing),
          });
          if (ids.some((id) => !base.known.has(id))) expect(decision).toBe('next');
        },
      ),
    );
  });
});

describe('applyPiiPolicy: MEMBER_PII', () => {
  const values = {
    email: 'ana@example.com',
    phone_number: '+12125550100',
    birthdate: '1990-01-02',
    zipcode: '10014',
  };
  const raw = { id: 'm', first_name: 'Ana', ...values };

  it('store keeps the values and the raw record as given', () => {
    expect(applyPiiPolicy(values, raw, 'store', KEY)).toEqual({ values, raw });
  });
  it('hash gives the same keyed hash for the same value, in the columns and in raw', () => {
    const once = applyPiiPolicy(values, raw, 'hash', KEY);
    const twice = applyPiiPolicy(values, raw, 'hash', KEY);
    expect(once).toEqual(twice);
    expect(once.values.email).toMatch(/^[0-9a-f]{64}$/);
    expect((once.raw as Record<string, unknown>)['email']).toBe(once.values.email);
    expect(applyPiiPolicy(values, raw, 'hash', Buffer.alloc(32, 8)).values.email).not.toBe(once.values.email);
  });
  // Marked values ("pii:…") so that a hit can only be the value itself, never a key or a hex digest.
  const pii = fc.string().map((text) => `pii:${text}`);

  it('property: with hash or omit, no PII value survives anywhere in the output', () => {
    fc.assert(
      fc.property(
        fc.record({
          email: pii,
          phone_number: fc.option(pii, { nil: null }),
          birthdate: fc.option(pii, { nil: null }),
          zipcode: fc.option(pii, { nil: null }),
        }),
        fc.constantFrom('hash' as const, 'omit' as const),
        (pii, mode) => {
          const out = applyPiiPolicy(pii, { first_name: 'x', ...pii }, mode, KEY);
          const text = JSON.stringify(out);
          for (const field of PII_FIELDS) {
            const value = pii[field];
            if (value !== null && !/^[0-9a-f]+$/.test(value))
              expect(text).not.toContain(JSON.stringify(value));
          }
        },
      ),
    );
  });
});
