/**
 * Exponential backoff without jitter: base, 2×base, 4×base, … capped. `attempts` counts the
 * attempt that just failed (1 for the first). For retries scheduled in the database (a failed
 * check-in window, an undelivered alert), where the retry time is stored and shown in `status`.
 */
export function exponentialBackoffMs(attempts: number, baseMs: number, capMs: number): number {
  const exponent = Math.min(Math.max(0, attempts - 1), 40);
  return Math.min(capMs, baseMs * 2 ** exponent);
}
