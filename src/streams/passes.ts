import type { PartnerApi } from '../api/partner-api.js';
import { finishSyncRun, startSyncRun, withAdvisoryLock } from '../warehouse/sync-runs.js';
import { STREAMS, type PassContext, type StreamName } from './registry.js';
import type { PassOutcome, StreamDeps } from './stream.js';

export type PassResult =
  | (PassOutcome & { stream: StreamName; runId: string })
  | { stream: StreamName; status: 'skipped'; reason: string };

/**
 * Runs one pass of a stream the same way from `run` and from a worker job: under a Postgres
 * advisory lock (one pass per stream at a time across every process), recorded in sync_runs,
 * counted in metrics. Another holder of the lock means the work is being done: skipped.
 */
export async function runStreamPass(
  deps: StreamDeps<PartnerApi>,
  stream: StreamName,
  context: PassContext = {},
): Promise<PassResult> {
  const { db, clock, logger, metrics } = deps;
  const log = logger.child({ stream });
  const pass = await STREAMS[stream].loadPass();
  const locked = await withAdvisoryLock(db, `stream:${stream}`, async () => {
    const runId = await startSyncRun(db, stream, clock.now());
    try {
      const outcome = await pass({ ...deps, logger: log }, context);
      await finishSyncRun(db, runId, { ...outcome, finishedAt: clock.now() });
      metrics.passes.inc({ stream, status: outcome.status });
      log.info(
        { status: outcome.status, rows: outcome.rows, requests: outcome.requests, details: outcome.details },
        'pass finished',
      );
      return { ...outcome, stream, runId };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await finishSyncRun(db, runId, {
        status: 'failed',
        finishedAt: clock.now(),
        rows: 0,
        error: message,
      }).catch(() => undefined);
      metrics.passes.inc({ stream, status: 'failed' });
      log.error({ err: error }, 'pass failed');
      throw error;
    }
  });
  if (!locked.acquired) {
    log.info('another process is running this stream; skipped');
    return { stream, status: 'skipped', reason: 'another process holds the stream lock' };
  }
  return locked.value;
}
