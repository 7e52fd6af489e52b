import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { defaultRhythm } from '../../src/simulator/data/rhythm.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { call, startFixedSimulator } from './sim-fixture.js';

// The test suite runs the simulator with a flat rhythm (vitest.config.ts) so that a window taken at
// the real clock holds as many rows at any hour; this shows it does, and keeps the daily total.
const WINDOWS = {
  evening: ['2025-02-27T00:00:00Z', '2025-02-27T01:00:00Z'], // 19:00 New York
  night: ['2025-02-27T09:00:00Z', '2025-02-27T10:00:00Z'], // 04:00 New York
} as const;

async function countIn(sim: RunningSimulator, [from, to]: readonly [string, string]): Promise<number> {
  const res = await call(sim, `/check_ins?created_after=${from}&created_before=${to}&page_size=1`, {
    apiKey: sim.credentials.apiKey,
  });
  return res.json.pagination.total_count as number;
}

describe('simulator rhythm', () => {
  let daily: RunningSimulator;
  let flat: RunningSimulator;
  beforeAll(async () => {
    daily = await startFixedSimulator({ rhythm: 'daily' });
    flat = await startFixedSimulator({ rhythm: 'flat' });
  });
  afterAll(async () => {
    await daily.close();
    await flat.close();
  });

  test('flat: an evening hour and a night hour hold about as many visits', async () => {
    const evening = await countIn(flat, WINDOWS.evening);
    const night = await countIn(flat, WINDOWS.night);
    // 5,000 visits over 10 days: about 21 an hour; a Poisson-like spread stays within a factor 2.
    expect(evening).toBeGreaterThan(5);
    expect(night).toBeGreaterThan(evening / 2);
    expect(night).toBeLessThan(evening * 2);
  });

  test('daily: the evening is several times the night (the contrast flat removes)', async () => {
    expect(await countIn(daily, WINDOWS.evening)).toBeGreaterThan((await countIn(daily, WINDOWS.night)) * 3);
  });

  test('both rhythms generate the same number of visits', async () => {
    const all = ['2000-01-01T00:00:00Z', '2100-01-01T00:00:00Z'] as const;
    expect(await countIn(flat, all)).toBe(await countIn(daily, all));
  });

  test('SIMULATOR_RHYTHM picks the default, and a typo names the variable', () => {
    expect(defaultRhythm({})).toBe('daily');
    expect(defaultRhythm({ SIMULATOR_RHYTHM: 'flat' })).toBe('flat');
    expect(() => defaultRhythm({ SIMULATOR_RHYTHM: 'flatt' })).toThrow(
      /SIMULATOR_RHYTHM must be one of daily, flat/,
    );
  });
});
