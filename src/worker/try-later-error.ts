/**
 * Control flow, not a failure: the job could not do its work now (its stream is busy under another
 * process's lease) and should run again after `delayMs`. The worker turns it into BullMQ's
 * `moveToDelayed` + `DelayedError`, so the job keeps its id, counts no failed attempt, and no
 * retry layer is added on top of the HTTP retries (docs/rate-limit.md#retries-one-layer-per-failure).
 */
export class TryLaterError extends Error {
  override readonly name = 'TryLaterError';

  constructor(
    message: string,
    readonly delayMs: number,
    /** The payload the job runs with next time (e.g. a count of tries), if it changes. */
    readonly nextPayload?: unknown,
  ) {
    super(message);
  }
}
