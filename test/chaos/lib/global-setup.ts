import { rmSync } from 'node:fs';
import { CHAOS_LOG_DIR } from './cli-process.js';

/**
 * Each chaos run starts with an empty log directory, so secrets.test.ts scans only this run's
 * output. In lanes (REWARDS_CHAOS_LANE, test/run-tests.ts) the runner empties it once before them.
 */
export function setup(): void {
  if (process.env.REWARDS_CHAOS_LANE === undefined) rmSync(CHAOS_LOG_DIR, { recursive: true, force: true });
}
