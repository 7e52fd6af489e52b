import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export type Verdict = 'PASS' | 'MISS' | 'info';

export interface Figure {
  name: string;
  measured: string;
  goal: string;
  verdict: Verdict;
}

/** PASS when `value` is at most `limit`. */
export function atMost(value: number, limit: number): Verdict {
  return value <= limit ? 'PASS' : 'MISS';
}

export function formatTable(figures: readonly Figure[]): string {
  const header: Figure = { name: 'Figure', measured: 'Measured', goal: 'Goal', verdict: 'info' };
  const rows = [header, ...figures];
  const width = (pick: (f: Figure) => string) => Math.max(...rows.map((f) => pick(f).length));
  const w = [width((f) => f.name), width((f) => f.measured), width((f) => f.goal)] as const;
  const line = (f: Figure, verdict: string) =>
    `| ${f.name.padEnd(w[0])} | ${f.measured.padStart(w[1])} | ${f.goal.padEnd(w[2])} | ${verdict.padEnd(7)} |`;
  const rule = `|${'-'.repeat(w[0] + 2)}|${'-'.repeat(w[1] + 2)}|${'-'.repeat(w[2] + 2)}|${'-'.repeat(9)}|`;
  return [line(header, 'Result'), rule, ...figures.map((f) => line(f, f.verdict))].join('\n');
}

export async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`);
}

export const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(0)} MB`;
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
