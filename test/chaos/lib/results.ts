import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = new URL('../../../test-artifacts/chaos-results/', import.meta.url).pathname;

/** Writes a scenario's measured figures (kills, faults, retries, rows lost, duplicates) for RELIABILITY.md. */
export function recordChaosResult(scenario: string, figures: Record<string, unknown>): void {
  mkdirSync(DIR, { recursive: true });
  const body = { scenario, at: new Date().toISOString(), scale: process.env.CHAOS_SCALE ?? 'ci', ...figures };
  writeFileSync(join(DIR, `${scenario}.json`), `${JSON.stringify(body, null, 2)}\n`);
  console.log(`[chaos] ${scenario}: ${JSON.stringify(figures)}`);
}
