import { describeOffset, type ClockOffset } from '../clock-offset.js';
import { fail, ok, skip, warn } from './check-lines.js';
import type { CheckResult } from './doctor-report.js';

// Pure verdict on the clocks: this host's against the partner API's Date header, Postgres's and Redis's.

export interface ClockFindings {
  /** The API's `Date` header (whole seconds), or null when no answer carried one. */
  dateHeader: string | null;
  sentAtMs: number;
  receivedAtMs: number;
  /** CHECKINS_SAFETY_LAG: windows close that long before now, so a larger skew cuts rows off. */
  safetyLagMs: number;
  /** Postgres's clock − this host's (the pipeline's clock is Postgres's); null when not measured. */
  postgres?: ClockOffset | null;
  /** Redis's clock − this host's (the shared rate limit's slots); null when not measured. */
  redis?: ClockOffset | null;
}

/** Alert receivers commonly reject signatures older than 5 minutes. */
const SIGNATURE_TOLERANCE_MS = 300_000;
/** Below this, skew is noise: the Date header has one-second resolution. */
const SKEW_NOISE_MS = 2_000;
const SKEW_WARN_MS = 10_000;
/** A host clock this far from Postgres's or Redis's is harmless to the pipeline, but surely a mistake. */
const ABSURD_OFFSET_MS = 3_600_000;

/** Skew = server time − local time at the middle of the exchange; ±1 s is the header's resolution. */
export function clockSkewMs(
  findings: Pick<ClockFindings, 'dateHeader' | 'sentAtMs' | 'receivedAtMs'>,
): number | null {
  if (findings.dateHeader === null) return null;
  const serverMs = Date.parse(findings.dateHeader);
  if (Number.isNaN(serverMs)) return null;
  // The header is truncated to the second: its true value lies in [serverMs, serverMs + 1000).
  return serverMs + 500 - (findings.sentAtMs + findings.receivedAtMs) / 2;
}

/**
 * The clocks. The pipeline's times are Postgres's (leases, due times, stored instants) and the rate
 * limit's slots Redis's, so this host's offset to either is information, not a problem (a warning
 * only when it is absurd: this host's log timestamps are then off). What still matters is the
 * partner API against the pipeline's clock: windows close CHECKINS_SAFETY_LAG before the
 * pipeline's now, and receivers check alert signatures stamped with it.
 */
export function judgeClock(findings: ClockFindings): CheckResult {
  const apiVsHost = clockSkewMs(findings);
  const postgres = findings.postgres ?? null;
  const redis = findings.redis ?? null;
  if (apiVsHost === null && postgres === null && redis === null)
    return skip('clock', 'not checked: no answer from the API, Postgres or Redis');
  const parts: string[] = [];
  if (postgres !== null) parts.push(describeOffset(postgres, "Postgres (the pipeline's clock)"));
  if (redis !== null) parts.push(describeOffset(redis, "Redis (the rate limit's clock)"));
  let status: 'ok' | 'warn' | 'fail' = 'ok';
  let fix: string | undefined;
  if (apiVsHost !== null) {
    // Without a Postgres measurement the pipeline runs on this host's clock.
    const reference = postgres === null ? 'this host' : 'Postgres';
    const skew = apiVsHost - (postgres?.offsetMs ?? 0);
    const seconds = (Math.abs(skew) / 1000).toFixed(1);
    const text =
      Math.abs(skew) <= SKEW_NOISE_MS
        ? `${reference === 'this host' ? 'in sync with the API' : 'Postgres is in sync with the API'} (within ${SKEW_NOISE_MS / 1000} s)`
        : `${reference} is ${seconds} s ${skew > 0 ? 'behind' : 'ahead of'} the API`;
    const ntp = `run NTP (chrony, systemd-timesyncd) on ${reference === 'this host' ? 'this host' : 'the Postgres host'}`;
    if (Math.abs(skew) > Math.min(findings.safetyLagMs, SIGNATURE_TOLERANCE_MS)) {
      status = 'fail';
      fix = ntp;
      parts.push(
        `${text}: more than CHECKINS_SAFETY_LAG or the 5 min signature tolerance (windows close on rows still arriving, receivers reject alert signatures)`,
      );
    } else {
      if (Math.abs(skew) > SKEW_WARN_MS) {
        status = 'warn';
        fix = ntp;
      }
      parts.push(text);
    }
  }
  const absurd = [postgres, redis].some(
    (offset) => offset !== null && Math.abs(offset.offsetMs) > ABSURD_OFFSET_MS,
  );
  if (status === 'ok' && absurd) {
    status = 'warn';
    fix =
      "run NTP on this host: harmless to the pipeline (its times are Postgres's and Redis's), but this host's log timestamps are off";
  }
  const detail = parts.join('; ');
  if (status === 'ok') return ok('clock', detail);
  return status === 'warn' ? warn('clock', detail, fix) : fail('clock', detail, fix);
}
