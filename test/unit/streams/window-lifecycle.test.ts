import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../../src/streams/checkins/window-lifecycle.js';
import { CHECKINS_TUNING } from '../../../src/streams/checkins/tuning.js';

// Issue 42 item 2: the check-in window lifecycle has one owner (src/streams/checkins/window-lifecycle.ts);
// the drivers choose which windows run and reach the window's row only through it.

const CHECKINS_DIR = 'src/streams/checkins';

function sourceOf(path: string): string {
  return readFileSync(path, 'utf8');
}

describe('the check-in window lifecycle', () => {
  it('a failed window waits 30 s doubling per attempt, at most an hour', () => {
    expect([1, 2, 3, 4, 7, 8, 50].map(retryDelayMs)).toEqual([
      30_000, 60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000,
    ]);
    expect(CHECKINS_TUNING.resyncAttempts).toBe(3);
  });

  it('only the lifecycle module of the check-in folder reaches warehouse/sync-windows', () => {
    // deps.ts reads the feed's name there (CHECKINS_STREAM), no window state.
    const others = readdirSync(CHECKINS_DIR)
      .filter((file) => file.endsWith('.ts') && !['window-lifecycle.ts', 'deps.ts'].includes(file))
      .filter((file) => sourceOf(join(CHECKINS_DIR, file)).includes('warehouse/sync-windows.js'));
    expect(others).toEqual([]);
  });

  it('backfill and verify call the library, not jobs/', () => {
    for (const command of ['backfill', 'verify']) {
      const source = sourceOf(`src/cli/commands/${command}.ts`);
      expect(source, command).not.toMatch(/\/jobs\//);
      expect(source, command).not.toContain('warehouse/sync-windows.js');
    }
  });
});
