import { RetryAfterTooLongError } from '../api/errors.js';
import { SharedPauseTooLongError } from '../api/shared-rate-limiter.js';

/**
 * Errors after which a pass must not start its next unit of work (window, restaurant, location,
 * member, intent): the partner API asked every client to wait longer than RETRY_AFTER_MAX
 * (RetryAfterTooLongError), or every process is paused for longer than a request may wait
 * (SharedPauseTooLongError). The next unit would only wait for the same pause and be told the same
 * thing, so a pass that caught these per unit would crawl through all of them, one pause each. The
 * pass ends instead, failed with this error, and a later pass (its schedule, or `run` again) tries
 * again. Every loop that catches errors per unit rethrows these first.
 */
export function stopsThePass(error: unknown): error is RetryAfterTooLongError | SharedPauseTooLongError {
  return error instanceof RetryAfterTooLongError || error instanceof SharedPauseTooLongError;
}
