import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  advanceStoredWatermark,
  loadCheckinsState,
  saveCheckinsState,
} from '../../../src/warehouse/checkins-feed-state.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

const at = (hour: number) => new Date(Date.UTC(2026, 10, 1, hour));

// The planner (under its lease) saves the frontier; window jobs (under their own leases) move the
// watermark. Each writes only its own part, so neither undoes the other from an older read.
describe('check-in state written by the planner and by window jobs', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('watermark_writes');
  });
  afterAll(async () => t?.drop());

  it('a planner saving from an older read keeps the watermark a window job moved; the watermark never goes back', async () => {
    await saveCheckinsState(t.db, { watermark: at(1), frontier: at(5) }, at(5));
    await advanceStoredWatermark(t.db, at(3), at(6));
    // The planner read the state before the window job moved the watermark.
    await saveCheckinsState(t.db, { watermark: at(1), frontier: at(7) }, at(7));
    expect(await loadCheckinsState(t.db)).toEqual({ watermark: at(3), frontier: at(7) });
    await advanceStoredWatermark(t.db, at(2), at(8));
    expect((await loadCheckinsState(t.db)).watermark).toEqual(at(3));
  });
});
