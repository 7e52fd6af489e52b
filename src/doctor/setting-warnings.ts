import { describeUnknownSetting, type UnknownSetting } from '../config/unknown-settings.js';
import { doctorReport, type DoctorReport } from './doctor-report.js';

/** One WARN line per unknown setting, right after the configuration line (the verdict recomputed). */
export function withSettingWarnings(report: DoctorReport, unknown: readonly UnknownSetting[]): DoctorReport {
  if (unknown.length === 0) return report;
  const warnings = unknown.map((setting) => ({
    check: 'configuration' as const,
    status: 'warn' as const,
    detail: describeUnknownSetting(setting),
    ...(setting.suggestion === undefined ? {} : { fix: `rename it to ${setting.suggestion}` }),
  }));
  const [first, ...rest] = report.checks;
  return doctorReport(first === undefined ? warnings : [first, ...warnings, ...rest]);
}
