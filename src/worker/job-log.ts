import type { Logger } from '../log.js';

/**
 * Check-in windows are the workers' main work and record no pass: one line per window paged, at
 * info (rows, requests, duration); a window skipped (locked, already complete) at debug.
 */
export function logWindowPaged(logger: Logger, result: unknown, durationMs: number): void {
  if (result === null || typeof result !== 'object' || !('window' in result) || !('status' in result)) return;
  const { window, status, rows, requests } = result as {
    window: unknown;
    status: unknown;
    rows?: unknown;
    requests?: unknown;
  };
  const fields = { window, status, rows: rows ?? 0, requests: requests ?? 0, durationMs };
  if (status === 'skipped') logger.debug(fields, 'window skipped');
  else logger.info(fields, 'window paged');
}
