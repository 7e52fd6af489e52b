import { rmSync } from 'node:fs';
import { CHAOS_LOG_DIR } from './cli-process.js';

/** Each chaos run starts with an empty log directory, so secrets.test.ts scans only this run's output. */
export function setup(): void {
  rmSync(CHAOS_LOG_DIR, { recursive: true, force: true });
}
