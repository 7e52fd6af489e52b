import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { presentedToken, STATUS_AUTH_CHALLENGE, statusTokenMatches } from '../../../src/http/status-auth.js';

const TOKEN = 'status-token-0123456789abcdef';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('STATUS_TOKEN: Bearer for scripts, Basic (token as the password) for browsers', () => {
  it('accepts HTTP Basic with the token as the password, whatever the user name', () => {
    for (const user of ['x', 'operator', '', 'ops team']) {
      expect(statusTokenMatches(basic(user, TOKEN), TOKEN)).toBe(true);
    }
  });

  it('keeps accepting Authorization: Bearer <token> (scripts, Prometheus)', () => {
    expect(statusTokenMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(statusTokenMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
  });

  it('refuses a wrong password, the token as the user name, a bare token and other schemes', () => {
    expect(statusTokenMatches(basic('x', `${TOKEN}x`), TOKEN)).toBe(false);
    expect(statusTokenMatches(basic(TOKEN, 'x'), TOKEN)).toBe(false);
    expect(statusTokenMatches(`Basic ${Buffer.from(TOKEN).toString('base64')}`, TOKEN)).toBe(false);
    expect(statusTokenMatches(TOKEN, TOKEN)).toBe(false);
    expect(statusTokenMatches(`Digest ${TOKEN}`, TOKEN)).toBe(false);
    expect(statusTokenMatches('Basic !!!not-base64', TOKEN)).toBe(false);
    expect(statusTokenMatches(undefined, TOKEN)).toBe(false);
    expect(statusTokenMatches('', TOKEN)).toBe(false);
  });

  it('a token with colons survives Basic auth (only the first colon splits user from password)', () => {
    const token = 'a:b:c-0123456789abcdef';
    expect(presentedToken(basic('me', token))).toBe(token);
    expect(statusTokenMatches(basic('me', token), token)).toBe(true);
  });

  it('any password but the token is refused, by either scheme', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((text) => text !== TOKEN && !/\s/.test(text)),
        (other) => {
          expect(statusTokenMatches(basic('u', other), TOKEN)).toBe(false);
          expect(statusTokenMatches(`Bearer ${other}`, TOKEN)).toBe(false);
        },
      ),
    );
  });

  it('the challenge makes a browser ask: Basic with the realm rewards-etl', () => {
    expect(STATUS_AUTH_CHALLENGE).toBe('Basic realm="rewards-etl"');
  });
});
