import { LeaseLostError } from '../../leases/lease-lost-error.js';
import { windowLease } from '../../leases/lease-names.js';
import { withLease } from '../../leases/with-lease.js';
import type { Window } from '../../sync/windows.js';
import { beginAttempt, failAttempt, loadWindow, releaseWindow, resetForRepage } from './window-lifecycle.js';
import { stopsThePass } from '../pass-stop.js';
import { leaseOptionsOf } from '../stream.js';
import { describeWindow, type CheckinsDeps } from './deps.js';
import { pageAttempts } from './page-attempts.js';

export type WindowOutcome =
  | { status: 'complete'; window: Window; rows: number; requests: number; removed: number; repages: number }
  | { status: 'split'; window: Window; parts: Window[]; requests: number }
  | { status: 'failed'; window: Window; requests: number; error: string }
  | { status: 'skipped'; window: Window; reason: 'locked' | 'missing' | 'already complete'; requests: 0 }
  /** The window's lease was lost midway: the current holder (or the next taker) resumes from the checkpoint. */
  | { status: 'lease-lost'; window: Window; requests: 0; reason: string };

export interface PageWindowOptions {
  force?: boolean;
  /**
   * `resync`: page the window from its first page whatever its state (complete ones too), giving
   * this reason. The reset happens under the window's lease, so it never disturbs a process paging
   * it; rows stay as they are until the new read rewrites them, and the drop guard's suspicion is kept.
   */
  restart?: string;
}

/**
 * Pages one closed window into the warehouse, newest first, resuming from its checkpoint, under
 * the window's lease (page-to-end.ts reads the pages, page-attempts.ts decides whether the read
 * is complete). A window another process holds is skipped; a lost lease stops the work, and the
 * holder resumes from the checkpoint.
 */
export async function pageWindow(
  deps: CheckinsDeps,
  window: Window,
  options: PageWindowOptions = {},
): Promise<WindowOutcome> {
  try {
    const leased = await withLease(deps.db, windowLease(window), leaseOptionsOf(deps), (lease) =>
      pageLeasedWindow({ ...deps, db: lease.db, signal: lease.signal }, window, options),
    );
    return leased.acquired ? leased.value : { status: 'skipped', window, reason: 'locked', requests: 0 };
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
    deps.logger.warn(
      { window: describeWindow(window), reason: error.reason },
      'check-in window stopped: its lease was lost; it resumes from its checkpoint',
    );
    return { status: 'lease-lost', window, requests: 0, reason: error.message };
  }
}

/** pageWindow's work, with `deps.db` fenced by the window's lease and `deps.signal` aborting when it is lost. */
async function pageLeasedWindow(
  deps: CheckinsDeps,
  window: Window,
  options: PageWindowOptions,
): Promise<WindowOutcome> {
  const { db } = deps;
  try {
    if (options.restart !== undefined) {
      await resetForRepage(db, window, {
        now: deps.clock.now(),
        reason: options.restart,
        countAsRepage: false,
      });
    }
    const started = await beginAttempt(db, window, deps.clock.now(), options);
    if (started === undefined) {
      const missing = (await loadWindow(db, window)) === undefined;
      return { status: 'skipped', window, reason: missing ? 'missing' : 'already complete', requests: 0 };
    }
    return await pageAttempts(deps, window, started);
  } catch (error) {
    return failedAttempt(deps, window, error);
  }
}

/** An attempt that threw: recorded on the window with its retry time (window-lifecycle.ts), unless the error is not the window's. */
async function failedAttempt(deps: CheckinsDeps, window: Window, error: unknown): Promise<WindowOutcome> {
  const { db } = deps;
  // A lost lease: nothing more may be written; withLease reports it.
  if (error instanceof LeaseLostError || deps.signal?.reason instanceof LeaseLostError) throw error;
  if (deps.signal?.aborted === true) {
    // Shutting down: not a failure. The checkpoint stays; the next taker resumes from it.
    await releaseWindow(db, window, deps.clock.now());
    throw error;
  }
  const message = error instanceof Error ? error.message : String(error);
  await failAttempt(db, window, message, deps.clock.now());
  deps.logger.warn(
    { window: describeWindow(window), err: error },
    'check-in window failed; it will be retried',
  );
  // The API asked everyone to wait longer than RETRY_AFTER_MAX: not this window's failure
  // alone; the whole pass (or the worker's job) stops here.
  if (stopsThePass(error)) throw error;
  return { status: 'failed', window, requests: 0, error: message };
}
