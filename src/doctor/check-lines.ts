import type { CheckId, CheckResult } from './doctor-report.js';

// What every verdict (judge.ts, judge-redis.ts, judge-clock.ts) is made of: what a probe saw,
// and the four kinds of check line.

export type Probe<T> = { ok: true; value: T } | { ok: false; error: unknown };

export const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
export const ok = (check: CheckId, detail: string): CheckResult => ({ check, status: 'ok', detail });
export const warn = (check: CheckId, detail: string, fix?: string): CheckResult => ({
  check,
  status: 'warn',
  detail,
  ...(fix === undefined ? {} : { fix }),
});
export const fail = (check: CheckId, detail: string, fix?: string): CheckResult => ({
  check,
  status: 'fail',
  detail,
  ...(fix === undefined ? {} : { fix }),
});
export const skip = (check: CheckId, detail: string): CheckResult => ({ check, status: 'skip', detail });
