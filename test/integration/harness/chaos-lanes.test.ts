import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';

// `npm test` runs the chaos suite as lanes a and b side by side, then `last`
// (vitest.chaos.config.ts, REWARDS_CHAOS_LANE). Asked of vitest itself (`vitest list`, which
// resolves each lane's globs as a run would, without running a test): every chaos file is in
// exactly one lane, the secrets scan is alone and last, and lane a's named files exist (a renamed
// one would leave that lane and fall into b, not out of the run).

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const VITEST = fileURLToPath(new URL('../../../node_modules/vitest/vitest.mjs', import.meta.url));
const run = promisify(execFile);

async function chaosFiles(lane: string | undefined): Promise<string[]> {
  const env = { ...process.env };
  delete env['REWARDS_CHAOS_LANE'];
  if (lane !== undefined) env['REWARDS_CHAOS_LANE'] = lane;
  const { stdout } = await run(
    process.execPath,
    [VITEST, 'list', '--filesOnly', '--config', 'vitest.chaos.config.ts'],
    { cwd: ROOT, env },
  );
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.endsWith('.test.ts'))
    .sort();
}

describe('the chaos lanes of npm test', () => {
  test('every chaos file runs in exactly one lane; the secrets scan alone, last', async () => {
    const [all, a, b, last] = await Promise.all([undefined, 'a', 'b', 'last'].map(chaosFiles));
    expect(all!.length).toBeGreaterThan(5);
    expect([...a!, ...b!, ...last!].sort()).toEqual(all);
    expect(new Set([...a!, ...b!, ...last!]).size).toBe(all!.length);
    expect(last).toEqual(['test/chaos/secrets.test.ts']);
    expect(a).toEqual([
      'test/chaos/api-faults.test.ts',
      'test/chaos/bad-config.test.ts',
      'test/chaos/redis-sentinel.test.ts',
    ]);
  });

  test('an unknown lane stops the run, naming the lanes', async () => {
    await expect(chaosFiles('c')).rejects.toThrow(/REWARDS_CHAOS_LANE=c: not one of a, b, last/);
  });
});
