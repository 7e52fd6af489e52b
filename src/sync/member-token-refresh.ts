// What a member's token refreshes cost the members' budget (docs/freshness.md). An access token
// lives 60 minutes (the partner API's Limits) and is refreshed a margin before it runs out, so a
// member read about hourly needs a refresh for nearly every read: one more request each. Pure: the
// members pass asks what a member costs now, `plan` what the refreshes cost an hour.

/** The partner API's access-token lifetime (spec, "Limits"). */
export const ACCESS_TOKEN_LIFETIME_MS = 3_600_000;
/** An access token is refreshed this long before its `exp`, so it never expires in flight. */
export const REFRESH_BEFORE_EXPIRY_MS = 120_000;

/** Requests a member's refresh costs before a read at `nowMs`: 1 without a usable access token. */
export function refreshCost(accessTokenExpiresAtMs: number | null, nowMs: number): number {
  return accessTokenExpiresAtMs === null || accessTokenExpiresAtMs - REFRESH_BEFORE_EXPIRY_MS <= nowMs
    ? 1
    : 0;
}

/**
 * At most how many refreshes an hour a member read every `readEveryMs` needs: one per read when
 * reads are further apart than a token is usable (lifetime − margin), else one per usable time.
 * (Exactly: a refresh, the reads the token still covers, a refresh at the first read past it; the
 * bound never falls as reads get more frequent, so `plan` can stretch intervals to fit a budget.)
 */
export function refreshesPerHour(readEveryMs: number): number {
  if (!(readEveryMs > 0) || !Number.isFinite(readEveryMs)) return 0;
  const usableMs = ACCESS_TOKEN_LIFETIME_MS - REFRESH_BEFORE_EXPIRY_MS;
  return 3_600_000 / Math.max(readEveryMs, usableMs);
}
