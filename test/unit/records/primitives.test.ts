import { describe, expect, it } from 'vitest';
import {
  currencySchema,
  decimalStringSchema,
  epochSecondsToDate,
  isUuid,
  parseDecimalString,
  parseIsoTimestamp,
  uuidSchema,
} from '../../../src/records/index.js';

describe('ISO 8601 timestamps -> Date', () => {
  it.each([
    ['2024-05-01T18:30:00Z', '2024-05-01T18:30:00.000Z'],
    ['2024-05-01T18:30:00z', '2024-05-01T18:30:00.000Z'],
    ['2024-05-01t18:30:00Z', '2024-05-01T18:30:00.000Z'],
    ['2024-05-01T18:30:00.123Z', '2024-05-01T18:30:00.123Z'],
    ['2024-05-01T18:30:00.1Z', '2024-05-01T18:30:00.100Z'],
    ['2024-05-01T18:30:00,25Z', '2024-05-01T18:30:00.250Z'],
    ['2024-05-01T18:30:00.123456789Z', '2024-05-01T18:30:00.123Z'],
    ['2024-05-01T18:30:00.999999+00:00', '2024-05-01T18:30:00.999Z'],
    ['2024-05-01T20:30:00+02:00', '2024-05-01T18:30:00.000Z'],
    ['2024-05-01T11:30:00-07:00', '2024-05-01T18:30:00.000Z'],
    ['2024-05-02T00:00:00+05:30', '2024-05-01T18:30:00.000Z'],
    ['2024-05-01T20:30:00+0200', '2024-05-01T18:30:00.000Z'],
    ['2024-05-01T20:30:00+02', '2024-05-01T18:30:00.000Z'],
    ['2024-05-01T18:30Z', '2024-05-01T18:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'],
    ['2024-01-01T00:30:00+01:00', '2023-12-31T23:30:00.000Z'],
  ])('%s is the instant %s', (text, iso) => {
    const result = parseIsoTimestamp(text);
    expect(result.ok && result.value.toISOString()).toBe(iso);
  });

  it.each([
    ['2024-13-01T00:00:00Z', 'month 13'],
    ['2024-00-10T00:00:00Z', 'month 0'],
    ['2024-02-30T00:00:00Z', 'day 30'],
    ['2023-02-29T00:00:00Z', 'day 29'],
    ['1900-02-29T00:00:00Z', 'day 29'],
    ['2024-04-31T00:00:00Z', 'day 31'],
    ['2024-05-01T24:00:00Z', 'hour 24'],
    ['2024-05-01T23:60:00Z', 'minute 60'],
    ['2024-05-01T23:59:60Z', 'second 60'],
    ['2024-05-01T10:00:00+24:00', 'offset'],
    ['2024-05-01T10:00:00', 'offset'],
    ['2024-05-01', 'offset'],
    ['1714588200', 'not an ISO'],
    ['garbage', 'not an ISO'],
    ['', 'not an ISO'],
    ['2024-5-1T10:00:00Z', 'not an ISO'],
    [' 2024-05-01T10:00:00Z', 'not an ISO'],
    ['2024-05-01T10:00:00.Z', 'not an ISO'],
  ])('%s is rejected (%s)', (text, fragment) => {
    const result = parseIsoTimestamp(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(fragment);
  });
});

describe('epoch seconds -> Date', () => {
  it.each([
    [0, '1970-01-01T00:00:00.000Z'],
    [1_700_000_000, '2023-11-14T22:13:20.000Z'],
    [-86_400, '1969-12-31T00:00:00.000Z'],
    [253_402_300_799, '9999-12-31T23:59:59.000Z'],
  ])('%d is %s', (seconds, iso) => {
    const result = epochSecondsToDate(seconds);
    expect(result.ok && result.value.toISOString()).toBe(iso);
  });

  it.each([
    [1.5, 'not an integer'],
    [Number.NaN, 'not an integer'],
    [Number.POSITIVE_INFINITY, 'not an integer'],
    [2 ** 60, 'not an integer'],
    [1_700_000_000_000, 'milliseconds?'],
  ])('%d is rejected', (seconds, fragment) => {
    const result = epochSecondsToDate(seconds);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(fragment);
  });
});

describe('big-integer amounts stay exact digit strings', () => {
  it.each([
    ['0', '0'],
    ['1', '1'],
    ['18446744073709551615', '18446744073709551615'], // 2^64 - 1
    ['18446744073709551617', '18446744073709551617'], // 2^64 + 1, not representable as a double
    ['340282366920938463463374607431768211457', '340282366920938463463374607431768211457'],
    ['0007', '7'],
    ['9'.repeat(78), '9'.repeat(78)],
  ])('%s -> %s', (text, expected) => {
    const result = parseDecimalString(text);
    expect(result.ok && result.value).toBe(expected);
  });

  it.each(['-1', '1.5', '1e18', '1E3', '+5', ' 1', '1 ', '0x10', '', '١٢', '1_000', '9'.repeat(79)])(
    '%j is rejected with a reason',
    (text) => {
      const result = parseDecimalString(text);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason.length).toBeGreaterThan(0);
    },
  );

  it('a JSON number is rejected even when it is an integer (strict type)', () => {
    expect(decimalStringSchema.safeParse(1000).success).toBe(false);
    expect(decimalStringSchema.safeParse(2 ** 70).success).toBe(false);
  });
});

describe('currency codes', () => {
  it.each([
    ['USD', 'usd'],
    ['usd', 'usd'],
    ['Token', 'token'],
  ])('%s -> %s', (code, expected) => {
    expect(currencySchema.parse(code)).toBe(expected);
  });

  it('rejects empty and non-string codes', () => {
    expect(currencySchema.safeParse('').success).toBe(false);
    expect(currencySchema.safeParse(840).success).toBe(false);
  });
});

describe('UUIDs', () => {
  it('accepts any 8-4-4-4-12 hex id and lower-cases it', () => {
    expect(uuidSchema.parse('3F1C2A9E-7B4D-4C1A-9E2F-0A1B2C3D4E5F')).toBe(
      '3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f',
    );
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
  });

  it.each(['', 'not-a-uuid', '3f1c2a9e7b4d4c1a9e2f0a1b2c3d4e5f', '3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5g', 42])(
    '%j is rejected',
    (value) => {
      expect(uuidSchema.safeParse(value).success).toBe(false);
    },
  );
});
