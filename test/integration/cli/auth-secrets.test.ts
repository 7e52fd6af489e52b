import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decryptToken } from '../../../src/api/oauth/token-crypto.js';
import { REFRESH_TOKEN_AAD } from '../../../src/api/oauth/token-manager.js';
import { DEFAULT_TOKEN_ROW } from '../../../src/api/oauth/token-store.js';
import { readTokens } from '../../../src/warehouse/oauth-tokens.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { REPO_ROOT } from '../../helpers/processes.js';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `rewards-etl …args` from source, with `input` on its standard input (then end of input). */
function cli(args: string[], env: Record<string, string>, input: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('auth import and auth exchange take secrets on standard input, not on the command line', () => {
  let sim: RunningSimulator;
  let database: TestDatabase;
  let env: Record<string, string>;
  const key = randomBytes(32);

  beforeAll(async () => {
    sim = await startSimulator({ seed: 77, checkIns: 10, days: 1 });
    database = await createTestDatabase('cli_auth_secrets');
    env = {
      DATABASE_URL: database.url,
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
      SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
      SVC_OAUTH_REDIRECT_URI: sim.credentials.redirectUri,
      TOKEN_ENCRYPTION_KEY: key.toString('base64'),
    };
  });

  afterAll(async () => {
    await database?.drop();
    await sim?.close();
  });

  beforeEach(async () => {
    await database.db.deleteFrom('rewards.oauth_tokens').execute();
  });

  const storedRefreshToken = async () => {
    const row = await readTokens(database.db, DEFAULT_TOKEN_ROW);
    return decryptToken(key, row!.refreshTokenSealed!, REFRESH_TOKEN_AAD(DEFAULT_TOKEN_ROW));
  };
  /** auth import redeems the token first: what it stores is the token the endpoint gave back. */
  const redeemed = async (ran: Ran, presented: string) => {
    expect(ran.stdout).toMatch(
      /redeemed and stored the refresh token \(encrypted\); access token valid until /,
    );
    const stored = await storedRefreshToken();
    expect(stored).toMatch(/\S/);
    expect(stored).not.toBe(presented); // the simulator rotates refresh tokens: the presented one is spent
    const row = await readTokens(database.db, DEFAULT_TOKEN_ROW);
    expect(row?.accessTokenSealed).toEqual(expect.any(String));
  };

  it('auth import reads the refresh token from standard input', async () => {
    const token = sim.control.credentials.issueRefreshToken();
    const ran = await cli(['auth', 'import'], env, `${token}\n`);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toContain('deprecated');
    await redeemed(ran, token);
  });

  it('auth import redeems the token before storing it: a refused token exits 1 and the stored token is kept', async () => {
    const good = sim.control.credentials.issueRefreshToken();
    expect((await cli(['auth', 'import'], env, `${good}\n`)).code).toBe(0);
    const kept = await storedRefreshToken();
    const ran = await cli(['auth', 'import'], env, 'rt_bogus\n');
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toContain(
      'rewards-etl: refresh token not stored: the token endpoint rejected it (invalid_grant',
    );
    expect(ran.stderr).toContain('the stored token is unchanged');
    expect(await storedRefreshToken()).toBe(kept);
  });

  it('auth import --refresh-token still works, with a deprecation warning', async () => {
    const token = sim.control.credentials.issueRefreshToken();
    const ran = await cli(['auth', 'import', '--refresh-token', token], env, '');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(/warning: --refresh-token is deprecated/);
    expect(ran.stderr).not.toContain(token);
    await redeemed(ran, token);
  });

  it('auth import falls back to SVC_OAUTH_REFRESH_TOKEN, and without either exits 2 naming it', async () => {
    const token = sim.control.credentials.issueRefreshToken();
    const fromEnv = await cli(['auth', 'import'], { ...env, SVC_OAUTH_REFRESH_TOKEN: token }, '');
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    await redeemed(fromEnv, token);
    const neither = await cli(['auth', 'import'], env, '');
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('SVC_OAUTH_REFRESH_TOKEN');
  });

  it('auth exchange reads the code and the code_verifier from standard input', async () => {
    const url = await cli(['auth', 'url'], env, '');
    expect(url.code, url.stderr).toBe(0);
    const authorizeUrl = /https?:\/\/\S+\/oauth\/authorize\S+/.exec(url.stdout)![0];
    const verifier = /code_verifier \(keep it for the exchange\): (\S+)/.exec(url.stdout)![1]!;
    expect(url.stdout).not.toContain('--verifier');
    const approved = await fetch(authorizeUrl, { redirect: 'manual' });
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    const ran = await cli(['auth', 'exchange'], env, `${code}\n${verifier}\n`);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/stored the new tokens/);
    expect(ran.stderr).not.toContain('deprecated');
    expect(await readTokens(database.db, DEFAULT_TOKEN_ROW)).toMatchObject({
      accessTokenSealed: expect.any(String) as unknown,
    });
  });

  it('auth exchange with too few lines on standard input exits 2', async () => {
    const ran = await cli(['auth', 'exchange'], env, 'only-a-code\n');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/code_verifier/);
  });
});
