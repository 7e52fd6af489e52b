import { describe, expect, it } from 'vitest';
import { withWindowProgress } from '../../../src/status/collect-status.js';
import type { RunSummary, StatusReport, StreamStatus } from '../../../src/status/status-report.js';
import { assessStatus, type VerdictThresholds } from '../../../src/status/verdict.js';

const NOW = '2026-11-25T12:00:00.000Z';
const ago = (seconds: number) => new Date(Date.parse(NOW) - seconds * 1000).toISOString();
// CHECKINS_SAFETY_LAG 1m + 3 × CHECKINS_EVERY 30s + 10 min, as thresholdsFor and the Prometheus rule.
const THRESHOLDS: VerdictThresholds = { maxLagSeconds: 60 + 90 + 600, overdueGraceSeconds: 600 };

function checkinsStream(lastRun: RunSummary | null): StreamStatus {
  return {
    stream: 'checkins',
    intervalSeconds: 30,
    lastRun,
    lastSuccessAt: lastRun?.status === 'succeeded' ? lastRun.startedAt : null,
    nextDueAt: lastRun === null ? null : new Date(Date.parse(lastRun.startedAt) + 30_000).toISOString(),
  };
}

function report(fields: { lagSeconds: number | null; failed?: number; stream: StreamStatus }) {
  return {
    generatedAt: NOW,
    checkins: { watermark: null, lagSeconds: fields.lagSeconds, frontier: null },
    windows: { counts: { pending: 0, running: 0, complete: 117, failed: fields.failed ?? 0 }, failed: [] },
    queues: { available: true, reason: '' },
    workers: { live: [] },
    streams: [fields.stream],
    alerts: { undelivered: 0, retrying: 0, failed: 0, recentFailures: [] },
    oauth: { needsReauthorization: false, configured: false, lastError: null, members: { needsReauth: 0 } },
    freshness: { kinds: [] },
    rejected: { last24h: 0 },
  } as unknown as Omit<StatusReport, 'verdict'>;
}

const manualRun = (startedAt: string, status: RunSummary['status'] = 'succeeded'): RunSummary => ({
  startedAt,
  finishedAt: startedAt,
  status,
  rows: 10,
  requests: 2,
  error: status === 'failed' ? 'boom' : null,
});

describe('the check-in feed is judged by its watermark lag and failed windows, not by passes', () => {
  it('a healthy feed whose only pass is a manual run 10½ minutes old is OK', () => {
    const verdict = assessStatus(
      report({ lagSeconds: 87, stream: checkinsStream(manualRun(ago(630))) }),
      THRESHOLDS,
    );
    expect(verdict).toEqual({ ok: true, problems: [] });
  });

  it('a failed manual run does not turn a healthy feed red', () => {
    const verdict = assessStatus(
      report({ lagSeconds: 87, stream: checkinsStream(manualRun(ago(60), 'failed')) }),
      THRESHOLDS,
    );
    expect(verdict.ok).toBe(true);
  });

  it('a watermark past the threshold (the Prometheus rule’s: safety lag + 3 intervals + 10 min) is ATTENTION', () => {
    expect(assessStatus(report({ lagSeconds: 750, stream: checkinsStream(null) }), THRESHOLDS).ok).toBe(true);
    expect(assessStatus(report({ lagSeconds: 751, stream: checkinsStream(null) }), THRESHOLDS)).toEqual({
      ok: false,
      problems: ['check-in watermark 12 min behind'],
    });
  });

  it('failed windows are ATTENTION', () => {
    const verdict = assessStatus(
      report({ lagSeconds: 87, failed: 2, stream: checkinsStream(null) }),
      THRESHOLDS,
    );
    expect(verdict.problems).toEqual(['2 failed windows']);
  });
});

describe("the workers' window progress is the check-in stream's last success", () => {
  const lastWindow = { completedAt: ago(20), rows: 40, pages: 1 };

  it('no pass ever recorded: the last window paged is the last run, not "never"', () => {
    const runs = withWindowProgress(
      new Map([['checkins', { lastRun: null, lastSuccessAt: null }]]),
      lastWindow,
    );
    expect(runs.get('checkins')).toEqual({
      lastRun: {
        startedAt: ago(20),
        finishedAt: ago(20),
        status: 'succeeded',
        rows: 40,
        requests: 1,
        error: null,
        kind: 'window',
      },
      lastSuccessAt: ago(20),
    });
  });

  it('an older manual pass is superseded by newer window progress', () => {
    const old = manualRun(ago(3600));
    const runs = withWindowProgress(
      new Map([['checkins', { lastRun: old, lastSuccessAt: old.startedAt }]]),
      lastWindow,
    );
    expect(runs.get('checkins')?.lastSuccessAt).toBe(ago(20));
    expect(runs.get('checkins')?.lastRun?.kind).toBe('window');
  });

  it('a pass newer than the last window stays the last run', () => {
    const fresh = manualRun(ago(5));
    const runs = withWindowProgress(
      new Map([['checkins', { lastRun: fresh, lastSuccessAt: fresh.startedAt }]]),
      lastWindow,
    );
    expect(runs.get('checkins')).toEqual({ lastRun: fresh, lastSuccessAt: ago(5) });
  });
});
