import { createHash, timingSafeEqual } from 'node:crypto';

// Who may read the status page, /status.json and /metrics when STATUS_TOKEN is set: a script or
// Prometheus with `Authorization: Bearer <token>`, or a browser with HTTP Basic auth whose password
// is the token (any user name). Neither the token nor the header is ever logged.

/** What a refused request is told: a browser then asks its user for a name and a password. */
export const STATUS_AUTH_CHALLENGE = 'Basic realm="rewards-etl"';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Compares digests, so neither the token's length nor its prefix leaks through timing. */
function sameToken(given: string, token: string): boolean {
  return timingSafeEqual(digest(given), digest(token));
}

/** The password of `Basic base64(user:password)`, or undefined when the header is not that. */
function basicPassword(credentials: string): string | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credentials)) return undefined;
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** The token an Authorization header presents (`Bearer <token>` or Basic with it as the password). */
export function presentedToken(header: string | undefined): string | undefined {
  const match = /^(Bearer|Basic)\s+(\S+)\s*$/i.exec(header ?? '');
  if (match === null) return undefined;
  const [, scheme = '', value = ''] = match;
  return scheme.toLowerCase() === 'bearer' ? value : basicPassword(value);
}

/** Whether the Authorization header carries STATUS_TOKEN, by either scheme; constant time. */
export function statusTokenMatches(header: string | undefined, token: string): boolean {
  const given = presentedToken(header);
  // Compared even when absent, so a request without credentials takes as long as a wrong one.
  const matches = sameToken(given ?? '', token);
  return given !== undefined && matches;
}
