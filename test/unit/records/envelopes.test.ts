import { describe, expect, it } from 'vitest';
import {
  parseChallengePage,
  parseFeedCheckIn,
  parseFeedCheckInPage,
  parseMemberCheckInPage,
  parseMembershipPage,
  parsePaymentIntentPage,
  parseRecords,
  parseRestaurantPage,
  parseUserTagList,
  parseWalletList,
} from '../../../src/records/index.js';
import * as fx from './fixtures.js';

describe('parseRecords: one bad record never fails its page', () => {
  it('splits a page into records and rejections, in order', () => {
    const bad = {
      ...fx.feedCheckIn(),
      id: 'c0ffee00-1234-4abc-8def-0123456789ac',
      created_at: '2024-13-01T00:00:00Z',
    };
    const { records, rejections } = parseRecords(
      [fx.feedCheckIn(), bad, 'junk', fx.feedCheckIn()],
      parseFeedCheckIn,
    );
    expect(records).toHaveLength(2);
    expect(rejections).toEqual([
      {
        recordId: 'c0ffee00-1234-4abc-8def-0123456789ac',
        reason: 'created_at: not an ISO 8601 timestamp: month 13 out of range ("2024-13-01T00:00:00Z")',
        payload: bad,
      },
      { recordId: null, reason: '(record): expected object, got string "junk"', payload: 'junk' },
    ]);
  });

  it('a non-array list becomes one rejection, not an exception', () => {
    const result = parseRecords({ not: 'a list' } as unknown as unknown[], parseFeedCheckIn);
    expect(result.records).toEqual([]);
    expect(result.rejections[0]?.reason).toBe('expected an array of records');
  });
});

describe('list envelopes', () => {
  it('{ check_ins, pagination } with pagination normalized', () => {
    const page = parseFeedCheckInPage({
      check_ins: [fx.feedCheckIn(), { broken: true }],
      pagination: { ...fx.pagination(), next_page: 1, total_pages: 2 },
      extra: 'tolerated',
    });
    expect(page.ok).toBe(true);
    if (!page.ok) return;
    expect(page.pagination).toEqual({
      totalCount: 3,
      totalPages: 2,
      currentPage: 0,
      nextPage: 1,
      pageSize: 50,
    });
    expect(page.records).toHaveLength(1);
    expect(page.rejections[0]?.reason).toContain('id: required field missing');
  });

  it('member check-ins use the short location form', () => {
    const page = parseMemberCheckInPage({ check_ins: [fx.shortFormCheckIn()], pagination: fx.pagination() });
    expect(page.ok && page.records[0]?.location.form).toBe('short');
  });

  it.each([
    ['restaurants', parseRestaurantPage, fx.listedRestaurant],
    ['memberships', parseMembershipPage, fx.membership],
    ['payment_intents', parsePaymentIntentPage, fx.listPaymentIntent],
    ['challenges', parseChallengePage, fx.challenge],
  ] as const)('{ %s, pagination }', (key, parse, fixture) => {
    const page = parse({ [key]: [fixture()], pagination: fx.pagination() });
    expect(page.ok && page.records.length).toBe(1);
  });

  it('unpaginated { wallets } and { tags } (empty list allowed)', () => {
    const wallets = parseWalletList({ wallets: [fx.userWallet()] });
    expect(wallets.ok && wallets.records.length).toBe(1);
    const tags = parseUserTagList({ tags: [] });
    expect(tags.ok && tags.records.length).toBe(0);
  });

  it.each([
    [null, '(record): expected object, got null'],
    [{ pagination: fx.pagination() }, 'check_ins: required field missing'],
    [{ check_ins: {}, pagination: fx.pagination() }, 'check_ins: expected array, got object'],
    [{ check_ins: [] }, 'pagination: required field missing'],
    [{ check_ins: [], pagination: { ...fx.pagination(), current_page: -1 } }, 'pagination.current_page: '],
    [
      { check_ins: [], pagination: { ...fx.pagination(), next_page: '1' } },
      'pagination.next_page: expected number, got string "1"',
    ],
  ])('an unusable envelope is ok: false with a reason (%j)', (raw, fragment) => {
    const page = parseFeedCheckInPage(raw);
    expect(page.ok).toBe(false);
    if (!page.ok) expect(page.reason).toContain(fragment);
  });
});
