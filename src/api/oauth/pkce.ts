import { createHash, randomBytes } from 'node:crypto';

// Authorization code flow with PKCE (RFC 7636, S256) for `rewards-etl auth url`.

export const MEMBER_SCOPES = [
  'read:profile',
  'read:user_checkins',
  'read:wallets',
  'read:tags',
  'read:memberships',
];

export interface PkcePair {
  /** Kept by the operator until `auth exchange`; 43 characters of base64url. */
  verifier: string;
  challenge: string;
}

export function codeChallengeS256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export function createPkcePair(random: (size: number) => Buffer = randomBytes): PkcePair {
  const verifier = random(32).toString('base64url');
  return { verifier, challenge: codeChallengeS256(verifier) };
}

export function createState(random: (size: number) => Buffer = randomBytes): string {
  return random(16).toString('base64url');
}

/** `…/oauth/token` -> `…/oauth/authorize`, the two endpoints the spec names side by side. */
export function authorizeEndpointFor(tokenUrl: string): string {
  const url = new URL(tokenUrl);
  url.pathname = url.pathname.replace(/\/token\/?$/, '/authorize');
  return url.toString();
}

export interface AuthorizeUrlInput {
  authorizeEndpoint: string;
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  state: string;
  codeChallenge: string;
}

export function buildAuthorizeUrl(input: AuthorizeUrlInput): string {
  const url = new URL(input.authorizeEndpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', input.clientId);
  url.searchParams.set('redirect_uri', input.redirectUri);
  url.searchParams.set('scope', input.scopes.join(' '));
  url.searchParams.set('state', input.state);
  url.searchParams.set('code_challenge', input.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

/** A fresh authorization request: the URL to open, its state, and the verifier to keep for the exchange. */
export function startAuthorization(input: {
  oauth: { tokenUrl: string; clientId: string };
  redirectUri: string;
  scopes: string;
}): { url: string; state: string; verifier: string } {
  const pkce = createPkcePair();
  const state = createState();
  const url = buildAuthorizeUrl({
    authorizeEndpoint: authorizeEndpointFor(input.oauth.tokenUrl),
    clientId: input.oauth.clientId,
    redirectUri: input.redirectUri,
    scopes: input.scopes.split(/\s+/).filter((scope) => scope !== ''),
    state,
    codeChallenge: pkce.challenge,
  });
  return { url, state, verifier: pkce.verifier };
}
