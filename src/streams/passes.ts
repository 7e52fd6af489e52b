import type { PartnerApi } from '../api/partner-api.js';
import { LeaseLostError } from '../leases/lease-lost-error.js';
import { streamLease } from '../leases/lease-names.js';
import { unfenced } from '../leases/fenced-database.js';
import { withLease, type HeldLease } from '../leases/with-lease.js';
import type { Logger } from '../log.js';
import type { LeaseHolder } from '../warehouse/leases.js';
import { finishSyncRun, startSyncRun } from '../warehouse/sync-runs.js';
import { STREAMS, type Pass, type PassContext } from './registry.js';
import { type StreamName } from '../sync/stream-facts.js';
import { leaseOptionsOf, type PassOutcome, type StreamDeps } from './stream.js';

export type PassResult =
  | (PassOutcome & { stream: StreamName; runId: string })
  | { stream: StreamName; status: 'skipped'; reason: string }
  /** The pass lost its stream lease midway: it stopped, and whoever holds the lease now does the work. */
  | { stream: StreamName; status: 'lease-lost'; reason: string };

/** One pass being run: the stream, its logger, and its sync_runs row once it has one. */
interface PassRun {
  deps: StreamDeps<PartnerApi>;
  stream: StreamName;
  log: Logger;
  runId?: string;
}

/**
 * Runs one pass of a stream the same way from `run` and from a worker job: under the stream's
 * lease (one pass per stream at a time across every process; src/leases/), recorded in sync_runs,
 * counted in metrics. Another holder of the lease means the work is being done: skipped. Every
 * write of the pass goes through the lease's fenced database, so a pass whose lease is lost
 * commits nothing more; it is then reported as `lease-lost`, not as a failure of the API.
 * `passOverride` replaces the stream's own pass under the same lease (`resync`, src/streams/resync.ts).
 */
export async function runStreamPass(
  deps: StreamDeps<PartnerApi>,
  stream: StreamName,
  context: PassContext = {},
  passOverride?: Pass,
): Promise<PassResult> {
  const run: PassRun = { deps, stream, log: deps.logger.child({ stream }) };
  const pass = passOverride ?? (await STREAMS[stream].loadPass());
  try {
    const leased = await withLease(
      deps.db,
      streamLease(stream),
      leaseOptionsOf({ ...deps, logger: run.log }),
      (lease) => runRecordedPass(run, lease, pass, context),
    );
    if (!leased.acquired) return skippedForHolder(run, leased.heldBy);
    return leased.value;
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
    return recordLeaseLost(run, error);
  }
}

/** The pass under its lease, with its sync_runs row started, then finished or failed. */
async function runRecordedPass(
  run: PassRun,
  lease: HeldLease,
  pass: Pass,
  context: PassContext,
): Promise<PassResult> {
  const { deps, stream, log } = run;
  const { clock, metrics } = deps;
  const runId = await startSyncRun(lease.db, stream, clock.now());
  run.runId = runId;
  try {
    const outcome = await pass({ ...deps, db: lease.db, signal: lease.signal, logger: log }, context);
    await finishSyncRun(lease.db, runId, { ...outcome, finishedAt: clock.now() });
    metrics.passes.inc({ stream, status: outcome.status });
    // An idle pass (nothing read, nothing wrong) is the common case: debug, so the work shows at info.
    const idle = outcome.status === 'succeeded' && outcome.rows === 0;
    log[idle ? 'debug' : 'info'](
      {
        status: outcome.status,
        rows: outcome.rows,
        requests: outcome.requests,
        details: outcome.details,
      },
      'pass finished',
    );
    return { ...outcome, stream, runId };
  } catch (error) {
    if (lease.signal.reason instanceof LeaseLostError || error instanceof LeaseLostError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    await finishSyncRun(lease.db, runId, {
      status: 'failed',
      finishedAt: clock.now(),
      rows: 0,
      error: message,
    }).catch(() => undefined);
    metrics.passes.inc({ stream, status: 'failed' });
    log.error({ err: error }, 'pass failed');
    throw error;
  }
}

function skippedForHolder(run: PassRun, holder: LeaseHolder | null): PassResult {
  run.log.info({ holder: holder?.holder }, 'another process is running this stream; skipped');
  return {
    stream: run.stream,
    status: 'skipped',
    reason:
      holder === null
        ? 'another process holds the stream lease'
        : `another process (${holder.holder}) holds the stream lease for up to ${Math.ceil(holder.expiresInMs / 1000)} s more unless it renews it (a process killed with kill -9 lets it expire)`,
  };
}

async function recordLeaseLost(run: PassRun, error: LeaseLostError): Promise<PassResult> {
  const { deps, stream, log } = run;
  // The run's own row, written without the lease: nobody else writes it, and it must not stay "running".
  if (run.runId !== undefined) {
    await finishSyncRun(unfenced(deps.db), run.runId, {
      status: 'failed',
      finishedAt: deps.clock.now(),
      rows: 0,
      error: error.message,
    }).catch(() => undefined);
  }
  deps.metrics.passes.inc({ stream, status: 'lease_lost' });
  log.warn(
    { reason: error.reason },
    'pass stopped: its stream lease was lost; the current holder does the work',
  );
  return { stream, status: 'lease-lost', reason: error.message };
}
