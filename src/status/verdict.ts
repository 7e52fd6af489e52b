import type { Config } from '../config/config.js';
import { formatDuration, plural } from './format.js';
import type { StatusReport, Verdict } from './status-report.js';

/** How late a stream or the watermark may be before a person should look. */
export interface VerdictThresholds {
  /** Check-in lag above this is a problem. */
  maxLagSeconds: number;
  /** Extra time past the next due run before a stream counts as overdue. */
  overdueGraceSeconds: number;
}

const GRACE_SECONDS = 600;

/**
 * Streams judged by what they are for rather than by their passes: workers page check-ins as
 * window jobs and never record a `checkins` pass, so the feed is judged by the watermark's lag and
 * failed windows (as RewardsEtlCheckinFeedLagging and RewardsEtlCheckinWindowsFailed do), never as
 * "overdue" or by a manual `run checkins` that failed.
 */
const JUDGED_BY_WATERMARK: ReadonlySet<string> = new Set(['checkins']);

/**
 * Normal lag is about CHECKINS_SAFETY_LAG plus one schedule interval (windows end at now minus the
 * safety lag, the watermark moves at each pass); three intervals and ten minutes of grace keep
 * a slow pass from raising the alarm.
 */
export function thresholdsFor(config: Config): VerdictThresholds {
  return {
    maxLagSeconds: (config.checkins.safetyLagMs + 3 * config.schedules.checkinsMs) / 1000 + GRACE_SECONDS,
    overdueGraceSeconds: GRACE_SECONDS,
  };
}

/** The one-line answer to "is anything wrong?": problems most urgent first, none means OK. */
export function assessStatus(report: Omit<StatusReport, 'verdict'>, thresholds: VerdictThresholds): Verdict {
  const now = new Date(report.generatedAt).getTime();
  const problems: string[] = [];
  if (report.windows.counts.failed > 0) problems.push(plural(report.windows.counts.failed, 'failed window'));
  if (report.alerts.failed > 0) problems.push(plural(report.alerts.failed, 'failed alert'));
  if (report.alerts.retrying > 0)
    problems.push(`${plural(report.alerts.retrying, 'alert')} retrying delivery`);
  for (const stream of report.streams) {
    if (JUDGED_BY_WATERMARK.has(stream.stream)) continue;
    if (stream.lastRun?.status === 'failed') problems.push(`last ${stream.stream} pass failed`);
  }
  const lag = report.checkins.lagSeconds;
  if (lag !== null && lag > thresholds.maxLagSeconds) {
    problems.push(`check-in watermark ${formatDuration(lag)} behind`);
  }
  for (const stream of report.streams) {
    if (stream.nextDueAt === null || stream.lastRun?.status === 'running') continue;
    if (JUDGED_BY_WATERMARK.has(stream.stream)) continue;
    const lateSeconds = (now - new Date(stream.nextDueAt).getTime()) / 1000;
    if (lateSeconds > thresholds.overdueGraceSeconds + stream.intervalSeconds) {
      problems.push(`${stream.stream} overdue by ${formatDuration(lateSeconds)}`);
    }
  }
  for (const worker of report.workers.live) {
    if (!worker.stuck) continue;
    const stuck = worker.queues.filter((queue) => queue.stuck).map((queue) => queue.queue);
    problems.push(
      `worker ${worker.host}:${worker.pid} stuck (${stuck.join(', ')} not taking jobs): restarting`,
    );
  }
  if (!report.queues.available && report.queues.reason.startsWith('Redis unreachable')) {
    problems.push('Redis unreachable: queue depths unknown');
  }
  if (report.oauth.needsReauthorization) problems.push('OAuth refresh token revoked: run `rewards-etl auth`');
  if (report.oauth.members.needsReauth > 0)
    problems.push(
      `${report.oauth.members.needsReauth} member connection(s) need re-authorization: rewards-etl members list`,
    );
  else if (report.oauth.configured && report.oauth.lastError !== null)
    problems.push('OAuth token refresh failing');
  for (const kind of report.freshness.kinds) {
    if (kind.pastCeiling > 0)
      problems.push(
        `${plural(kind.pastCeiling, `${kind.kind} record`)} unread past the ceiling: the budget does not keep up (rewards-etl plan)`,
      );
  }
  if (report.rejected.last24h > 0)
    problems.push(`${plural(report.rejected.last24h, 'record')} rejected in 24 h`);
  return { ok: problems.length === 0, problems };
}

/** `OK` or `ATTENTION: 2 failed windows, 1 failed alert`. */
export function verdictLine(verdict: Verdict): string {
  return verdict.ok ? 'OK' : `ATTENTION: ${verdict.problems.join(', ')}`;
}
