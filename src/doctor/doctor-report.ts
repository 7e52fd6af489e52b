// What `rewards-etl doctor` prints: one line per check and a verdict. Plain data, no I/O.

/** `warn` never changes the exit code; `skip` means the check could not run (a line above says why). */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export const CHECK_IDS = [
  'configuration',
  'postgres',
  'postgres connection',
  'migrations',
  'redis',
  'redis eviction',
  'redis failover',
  'api',
  'scope read:checkins',
  'scope read:restaurant_challenges',
  'scope read:balance',
  'oauth',
  'webhook',
  'clock',
] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export interface CheckResult {
  check: CheckId;
  status: CheckStatus;
  /** What was found, in one line: "reachable, PostgreSQL 16.4". */
  detail: string;
  /** What to do about it, when there is something to do. */
  fix?: string;
}

export const DoctorExit = { ok: 0, checkFailed: 1, badConfiguration: 2 } as const;
export type DoctorExit = (typeof DoctorExit)[keyof typeof DoctorExit];

export interface DoctorReport {
  ok: boolean;
  exitCode: DoctorExit;
  verdict: string;
  checks: CheckResult[];
}

/** Exit 2 when the configuration is bad, 1 when any other check failed, 0 otherwise (warnings included). */
export function doctorReport(checks: CheckResult[]): DoctorReport {
  const failed = checks.filter((check) => check.status === 'fail');
  const warnings = checks.filter((check) => check.status === 'warn');
  const exitCode: DoctorExit = failed.some((check) => check.check === 'configuration')
    ? DoctorExit.badConfiguration
    : failed.length > 0
      ? DoctorExit.checkFailed
      : DoctorExit.ok;
  const names = (list: CheckResult[]) => [...new Set(list.map((check) => check.check))].join(', ');
  const verdict =
    exitCode === DoctorExit.badConfiguration
      ? 'BAD CONFIGURATION: fix the setting named above, then run doctor again'
      : failed.length > 0
        ? `FAILED: ${names(failed)}${warnings.length > 0 ? `; warnings: ${names(warnings)}` : ''}`
        : warnings.length > 0
          ? `OK with warnings: ${names(warnings)}`
          : 'OK: every check passed';
  return { ok: exitCode === DoctorExit.ok, exitCode, verdict, checks };
}

const LABEL: Record<CheckStatus, string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', skip: 'skip' };
const CHECK_WIDTH = Math.max(...CHECK_IDS.map((id) => id.length));

/** One aligned line per check (the fix on the same line, after an arrow), then the verdict. */
export function renderDoctorText(report: DoctorReport): string {
  const lines = report.checks.map(
    (check) =>
      `${LABEL[check.status].padEnd(4)}  ${check.check.padEnd(CHECK_WIDTH)}  ${check.detail}` +
      (check.fix === undefined ? '' : ` → ${check.fix}`),
  );
  return `${[...lines, '', `verdict: ${report.verdict}`].join('\n')}\n`;
}
