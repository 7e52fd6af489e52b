// Pure pieces of the retry policy: how long a 429 asks us to wait, and backoff with full jitter.

/**
 * `Retry-After` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). Returns milliseconds to
 * wait (0 for a date in the past), or null when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (/^\d+\.\d+$/.test(text)) return Math.ceil(Number(text) * 1000);
  if (!/^[A-Za-z]{3},/.test(text)) return null; // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

export interface BackoffOptions {
  baseMs: number;
  capMs: number;
}

/**
 * "Full jitter" (AWS architecture blog, Exponential Backoff and Jitter): a uniform draw in
 * [0, min(cap, base * 2^retry)). Spreads the retries of many clients hit by the same outage.
 * `random` is in [0, 1).
 */
export function fullJitterDelayMs(retryIndex: number, options: BackoffOptions, random: number): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, retryIndex));
  return Math.floor(random * ceiling);
}
