import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  challengeThresholdToJson,
  isKnownChallengeType,
  parseAccountBalance,
  parseChallenge,
  parseEmbeddedRestaurant,
  parseFeedCheckIn,
  parseFullLocation,
  parseListedRestaurant,
  parseMemberStatus,
  parseMembership,
  parseOpenHours,
  parsePaymentIntent,
  parsePaymentIntentCancelResponse,
  parsePaymentIntentConfirmResponse,
  parsePaymentIntentListItem,
  parseReducedLocation,
  parseShortFormCheckIn,
  parseShortLocation,
  parseUser,
  parseUserTag,
  parseUserWallet,
  restaurantVersionContent,
  contentHash,
  type ParseResult,
  type RecordParser,
} from '../../../src/records/index.js';
import * as fx from './fixtures.js';

function record<T>(result: ParseResult<T>): T {
  if (!result.ok) throw new Error(`expected a record, got rejection: ${result.rejection.reason}`);
  return result.record;
}

function reason(result: ParseResult<unknown>): string {
  if (result.ok) throw new Error('expected a rejection');
  return result.rejection.reason;
}

describe('restaurant: epoch seconds in the list, ISO 8601 when embedded', () => {
  it('list form converts epoch created_at/updated_at and keeps raw', () => {
    const raw = fx.listedRestaurant();
    const r = record(parseListedRestaurant(raw));
    expect(r.createdAt?.toISOString()).toBe('2023-11-14T22:13:20.000Z');
    expect(r.updatedAt?.toISOString()).toBe('2023-11-14T23:13:20.000Z');
    expect(r).toMatchObject({
      form: 'list',
      id: fx.IDS.restaurant,
      cohort: 'fsr',
      price: 2,
      instagramUrl: null,
    });
    expect(r.raw).toBe(raw);
  });

  it('list form rejects ISO timestamps (the spec says epoch there)', () => {
    expect(
      reason(parseListedRestaurant({ ...fx.listedRestaurant(), created_at: '2023-11-14T22:13:20Z' })),
    ).toMatch(/^created_at: expected number, got string/);
  });

  it('embedded full form reads ISO timestamps; embedded form rejects epoch', () => {
    const r = record(parseEmbeddedRestaurant(fx.embeddedFullRestaurant()));
    expect(r.createdAt?.toISOString()).toBe('2023-11-14T22:13:20.000Z');
    expect(reason(parseEmbeddedRestaurant(fx.listedRestaurant()))).toContain('created_at: expected string');
  });

  it('embedded short form {id, object, name} leaves every other field absent', () => {
    const r = record(parseEmbeddedRestaurant(fx.shortRestaurant()));
    expect(Object.keys(r).sort()).toEqual(['form', 'id', 'name', 'raw']);
  });

  it('hashes for history ignore the expiring query string of asset URLs', () => {
    const a = record(parseListedRestaurant(fx.listedRestaurant()));
    const later = fx.listedRestaurant();
    later['asset'] = {
      preview_1x: 'https://img.example/r/1x.png?expires=2',
      web_2x: 'https://img.example/r/2x.png?expires=2',
      full_3x: 'https://img.example/r/3x.png',
    };
    const b = record(parseListedRestaurant(later));
    expect(contentHash(restaurantVersionContent(a))).toBe(contentHash(restaurantVersionContent(b)));
    const renamed = record(parseListedRestaurant({ ...fx.listedRestaurant(), name: 'Noodle Bar 2' }));
    expect(contentHash(restaurantVersionContent(renamed))).not.toBe(contentHash(restaurantVersionContent(a)));
  });
});

describe('location: one type for the full, reduced and short forms', () => {
  const optionalKeys = [
    'slug',
    'address',
    'coordinate',
    'phoneNumber',
    'timeZone',
    'paymentsEnabled',
    'isClub',
    'reservationUrl',
    'reservationsEnabled',
    'googlePlaceId',
    'createdAt',
    'updatedAt',
  ];

  it('full form carries every field, nullable ones as null', () => {
    const l = record(parseFullLocation(fx.fullLocation()));
    for (const key of optionalKeys) expect(l).toHaveProperty(key);
    expect(l).toMatchObject({
      form: 'full',
      restaurantId: fx.IDS.restaurant,
      neighborhoodId: fx.IDS.neighborhood,
      neighborhood: { id: fx.IDS.neighborhood, name: 'Mission', region: 'San Francisco' },
      reservationUrl: null,
      timeZone: 'America/Los_Angeles',
      coordinate: { latitude: 37.77, longitude: -122.42 },
    });
    expect(l.updatedAt?.toISOString()).toBe('2023-06-01T10:00:00.000Z');
  });

  it('reduced form (GET /locations/{id}): fields it lacks are absent, not null', () => {
    const l = record(parseReducedLocation(fx.reducedLocation()));
    expect(l.form).toBe('reduced');
    for (const key of [
      'slug',
      'phoneNumber',
      'reservationUrl',
      'reservationsEnabled',
      'googlePlaceId',
      'createdAt',
      'updatedAt',
    ]) {
      expect(Object.hasOwn(l, key), key).toBe(false);
    }
    expect(l.isClub).toBe(false);
    expect(l.address?.city).toBe('San Francisco');
  });

  it('short form (member check-ins): only id, name, restaurant, neighborhood', () => {
    const l = record(parseShortLocation(fx.shortLocation()));
    for (const key of optionalKeys) expect(Object.hasOwn(l, key), key).toBe(false);
    expect(l.restaurant).toMatchObject({ id: fx.IDS.restaurant, name: 'Noodle Bar', form: 'embedded' });
  });

  it('each form requires its own fields', () => {
    expect(reason(parseFullLocation(fx.reducedLocation()))).toContain('slug: required field missing');
    expect(reason(parseReducedLocation(fx.shortLocation()))).toContain('address: required field missing');
    expect(reason(parseShortLocation({ ...fx.shortLocation(), neighborhood: undefined }))).toContain(
      'neighborhood: required field missing',
    );
  });

  it('rejects out-of-range coordinates and wrong nested types with the path', () => {
    const raw = fx.fullLocation();
    raw['coordinate'] = { latitude: 91, longitude: 0 };
    expect(reason(parseFullLocation(raw))).toMatch(/^coordinate\.latitude: /);
    const raw2 = fx.fullLocation();
    (raw2['restaurant'] as Record<string, unknown>)['created_at'] = '2023-02-30T00:00:00Z';
    expect(reason(parseFullLocation(raw2))).toContain(
      'restaurant.created_at: not an ISO 8601 timestamp: day 30',
    );
  });

  it('open hours are kept as JSON; only an object or array is required', () => {
    expect(record(parseOpenHours({ mon: [['09:00', '17:00']] })).hours).toEqual({
      mon: [['09:00', '17:00']],
    });
    expect(record(parseOpenHours([])).hours).toEqual([]);
    expect(reason(parseOpenHours('9-5'))).toContain('expected an object or array');
    expect(reason(parseOpenHours(null))).toContain('null');
  });
});

describe('check_in', () => {
  it('venue feed: full location, ended_at null for an ongoing visit', () => {
    const c = record(parseFeedCheckIn(fx.feedCheckIn()));
    expect(c).toMatchObject({
      id: fx.IDS.checkIn,
      svcPayEnabled: true,
      endedAtMs: null,
      locationId: fx.IDS.location,
      restaurantId: fx.IDS.restaurant,
      neighborhoodId: fx.IDS.neighborhood,
    });
    expect(new Date(c.createdAtMs).toISOString()).toBe('2024-05-01T18:30:00.123Z');
    expect(c.location.form).toBe('full');
    expect(c.location.raw).toEqual(fx.fullLocation());
  });

  it('member history / single retrieval: short location, ended_at with an offset', () => {
    const c = record(parseShortFormCheckIn(fx.shortFormCheckIn()));
    expect(c.location.form).toBe('short');
    expect(c.endedAtMs).toBe(Date.parse('2024-05-02T03:00:00.000Z'));
  });

  it('the feed parser rejects a short-form location instead of guessing', () => {
    expect(reason(parseFeedCheckIn(fx.shortFormCheckIn()))).toContain(
      'location.address: required field missing',
    );
  });

  it('ids are lower-cased', () => {
    const c = record(parseFeedCheckIn({ ...fx.feedCheckIn(), id: fx.IDS.checkIn.toUpperCase() }));
    expect(c.id).toBe(fx.IDS.checkIn);
  });
});

describe('member records', () => {
  it('user', () => {
    expect(record(parseUser(fx.user()))).toMatchObject({
      firstName: 'Ada',
      birthdate: '1990-02-28',
      zipcode: null,
    });
    expect(reason(parseUser({ ...fx.user(), birthdate: '1990-02-30' }))).toContain(
      'birthdate: not a YYYY-MM-DD',
    );
    expect(record(parseUser(fx.user())).accountStatusListed).toBe(true);
  });

  it('an account_status the spec does not list keeps the profile, flagged as unlisted', () => {
    expect(record(parseUser({ ...fx.user(), account_status: 'closed' }))).toMatchObject({
      accountStatus: 'closed',
      accountStatusListed: false,
    });
    expect(reason(parseUser({ ...fx.user(), account_status: 7 }))).toBe(
      'account_status: expected string, got number',
    );
  });

  it('a member record is rejected naming the field and the types, never quoting a received value', () => {
    const fields = ['email', 'phone_number', 'birthdate', 'zipcode', 'first_name', 'last_name', 'avatar'];
    const values = fc.oneof(
      fc.integer({ min: 100_000 }),
      fc.stringMatching(/^[a-z0-9]{10,20}$/),
      fc.boolean(),
      fc.array(fc.stringMatching(/^[a-z0-9]{10,20}$/), { minLength: 1, maxLength: 2 }),
      fc.dictionary(fc.constantFrom('k', 'v'), fc.integer({ min: 100_000 }), { minKeys: 1 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...fields), values, (field, value) => {
        const result = parseUser({ ...fx.user(), [field]: value });
        if (result.ok) return;
        for (const shown of typeof value === 'object' ? [JSON.stringify(value)] : [String(value)])
          expect(result.rejection.reason).not.toContain(shown);
        expect(result.rejection.reason.startsWith(`${field}: `)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('status: epoch year bounds, cents and big-integer progress, lower-case currencies', () => {
    const s = record(parseMemberStatus(fx.memberStatus()));
    expect(s.yearStart.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(s.progress.spendThreshold).toEqual({ value: 50_000, currency: 'usd' });
    expect(s.progress.tokenDeposit).toEqual({ value: '1000000000000000000', currency: 'token' });
    expect(s.tier).toBe('Gold\nMember');
    expect(reason(parseMemberStatus({ ...fx.memberStatus(), level: 8 }))).toMatch(/^level: /);
  });

  it('wallet, tag (no id in the spec), membership', () => {
    expect(record(parseUserWallet(fx.userWallet())).walletType).toBe('SPENDING');
    const tag = record(parseUserTag(fx.userTag()));
    expect(Object.hasOwn(tag, 'id')).toBe(false);
    expect(record(parseUserTag({ ...fx.userTag(), type: 'future_type' })).type).toBe('future_type');
    const m = record(parseMembership(fx.membership()));
    expect(m).toMatchObject({ checkInCount: 7, membershipTier: { name: 'VIP' } });
    expect(m.lastCheckInDate?.toISOString()).toBe('2024-04-30T19:00:00.000Z');
  });
});

describe('payment_intent forms', () => {
  it('full form', () => {
    const p = record(parsePaymentIntent(fx.fullPaymentIntent()));
    expect(p).toMatchObject({
      form: 'full',
      status: 'pending',
      amount: { value: '123456789012345678901234567890', currency: 'token' },
      paidAt: null,
      metadata: { order: '42' },
      payerAccountBalanceId: fx.IDS.payer,
    });
  });

  it('list subset: the fields it lacks are absent, so a writer never nulls them', () => {
    const p = record(parsePaymentIntentListItem(fx.listPaymentIntent()));
    for (const key of [
      'paidAt',
      'canceledAt',
      'refundedAt',
      'expiresAt',
      'metadata',
      'payerAccountBalanceId',
    ]) {
      expect(Object.hasOwn(p, key), key).toBe(false);
    }
    expect(p.description).toBe('Dinner');
  });

  it('confirm and cancel responses', () => {
    const { id, object, amount } = fx.fullPaymentIntent();
    const confirmed = record(
      parsePaymentIntentConfirmResponse({
        id,
        object,
        amount,
        status: 'paid',
        paid_at: '2024-05-01T18:05:00Z',
      }),
    );
    expect(confirmed.paidAt?.toISOString()).toBe('2024-05-01T18:05:00.000Z');
    expect(Object.hasOwn(confirmed, 'canceledAt')).toBe(false);
    const canceled = record(
      parsePaymentIntentCancelResponse({
        id,
        object,
        amount,
        status: 'canceled',
        canceled_at: '2024-05-01T18:05:00Z',
      }),
    );
    expect(Object.hasOwn(canceled, 'paidAt')).toBe(false);
    expect(canceled.status).toBe('canceled');
  });

  it('rejects unknown status, float amount and non-string metadata values', () => {
    expect(reason(parsePaymentIntent({ ...fx.fullPaymentIntent(), status: 'settled' }))).toMatch(/^status: /);
    expect(
      reason(parsePaymentIntent({ ...fx.fullPaymentIntent(), amount: { value: '1.5', currency: 'TOKEN' } })),
    ).toContain('amount.value: not a non-negative integer digit string');
    expect(reason(parsePaymentIntent({ ...fx.fullPaymentIntent(), metadata: { n: 1 } }))).toContain(
      'metadata.n: expected string',
    );
  });
});

describe('challenge', () => {
  it('typed thresholds: money as exact strings, counts as integers', () => {
    const c = record(parseChallenge(fx.challenge()));
    expect(c.threshold).toEqual({
      spendThreshold: { value: '100000000000000000000', currency: 'token' },
      minimumSpend: { value: '5', currency: 'token' },
      extra: {},
    });
    expect(c.tokenReward.value).toBe('18446744073709551617');
    expect(c.acceptedCurrencies).toEqual(['usd', 'token']);
    const dines = record(
      parseChallenge({ ...fx.challenge(), type: 'DINES', threshold: { dine_threshold: 5 } }),
    );
    expect(dines.threshold).toEqual({ dineThreshold: 5, extra: {} });
    expect(reason(parseChallenge({ ...fx.challenge(), threshold: { referral_threshold: 2.5 } }))).toMatch(
      /^threshold\.referral_threshold: expected int/,
    );
  });

  it('unknown challenge types and unknown threshold fields are kept', () => {
    const c = record(
      parseChallenge({
        ...fx.challenge(),
        type: 'BIRTHDAY',
        threshold: { passport_stamps: 4, nested: { a: [1] } },
      }),
    );
    expect(c.type).toBe('BIRTHDAY');
    expect(isKnownChallengeType(c.type)).toBe(false);
    expect(c.threshold.extra).toEqual({ passport_stamps: 4, nested: { a: [1] } });
    expect(challengeThresholdToJson(c.threshold)).toEqual({ passport_stamps: 4, nested: { a: [1] } });
  });

  it('threshold JSON for the warehouse keeps exact amounts and lower-case currencies', () => {
    const c = record(parseChallenge(fx.challenge()));
    expect(challengeThresholdToJson(c.threshold)).toEqual({
      spend_threshold: { value: '100000000000000000000', currency: 'token' },
      minimum_spend: { value: '5', currency: 'token' },
    });
  });
});

describe('account_balance', () => {
  it('balance beyond 2^128 stays exact; USD cents are integers', () => {
    const b = record(parseAccountBalance(fx.accountBalance()));
    expect(b.balance).toEqual({ value: '340282366920938463463374607431768211457', currency: 'token' });
    expect(BigInt(b.balance.value)).toBe(2n ** 128n + 1n);
    expect(b.balanceUsd).toEqual({ value: 1999, currency: 'usd' });
    expect(
      reason(parseAccountBalance({ ...fx.accountBalance(), balance_usd: { value: 19.99, currency: 'USD' } })),
    ).toMatch(/^balance_usd\.value: expected int/);
  });
});

const everyParser: [string, RecordParser<unknown>, () => Record<string, unknown>][] = [
  ['listed restaurant', parseListedRestaurant, fx.listedRestaurant],
  ['embedded restaurant', parseEmbeddedRestaurant, fx.embeddedFullRestaurant],
  ['full location', parseFullLocation, fx.fullLocation],
  ['reduced location', parseReducedLocation, fx.reducedLocation],
  ['short location', parseShortLocation, fx.shortLocation],
  ['feed check-in', parseFeedCheckIn, fx.feedCheckIn],
  ['short-form check-in', parseShortFormCheckIn, fx.shortFormCheckIn],
  ['user', parseUser, fx.user],
  ['status', parseMemberStatus, fx.memberStatus],
  ['wallet', parseUserWallet, fx.userWallet],
  ['tag', parseUserTag, fx.userTag],
  ['membership', parseMembership, fx.membership],
  ['payment intent', parsePaymentIntent, fx.fullPaymentIntent],
  ['payment intent list item', parsePaymentIntentListItem, fx.listPaymentIntent],
  ['challenge', parseChallenge, fx.challenge],
  ['account balance', parseAccountBalance, fx.accountBalance],
];

describe('rules common to every resource', () => {
  it.each(everyParser)('%s: unknown fields are tolerated', (_name, parse, fixture) => {
    expect(parse({ ...fixture(), brand_new_field: { x: 1 }, another: null }).ok).toBe(true);
  });

  it.each(everyParser)(
    '%s: wrong id type and wrong object kind are rejected with the field',
    (_name, parse, fixture) => {
      expect(reason(parse({ ...fixture(), object: 'something_else' }))).toMatch(/^object: /);
      const bad = fixture();
      if ('id' in bad) expect(reason(parse({ ...bad, id: 'nope' }))).toBe('id: not a UUID');
    },
  );

  it.each(everyParser)(
    '%s: a rejection keeps the payload and the id as received',
    (_name, parse, fixture) => {
      const payload = { ...fixture(), id: 'NOT-A-UUID', object: 42 };
      const result = parse(payload);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.rejection.payload).toBe(payload);
        expect(result.rejection.recordId).toBe('NOT-A-UUID');
        expect(result.rejection.reason).toContain('object: expected');
      }
    },
  );

  it.each(everyParser)('%s: non-object payloads are rejected, not thrown', (_name, parse) => {
    for (const payload of [null, undefined, 42, 'x', [], true]) {
      const result = parse(payload);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.rejection.recordId).toBeNull();
    }
  });
});
