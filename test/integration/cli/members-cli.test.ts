import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, freshDatabaseUrl, type TestDatabase } from '../../helpers/db.js';
import { createProcessPool } from '../../helpers/processes.js';

// `rewards-etl members import | connect | list | forget` as a user runs them: secrets on standard input.

describe('rewards-etl members', () => {
  const pool = createProcessPool();
  let sim: RunningSimulator;
  let database: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 15, checkIns: 10, days: 1 });
    database = await createTestDatabase('cli_members');
    env = {
      DATABASE_URL: database.url,
      SVC_API_BASE_URL: sim.baseUrl,
      SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
      SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
      SVC_OAUTH_REDIRECT_URI: sim.credentials.redirectUri,
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    };
  });
  afterAll(async () => {
    await pool.cleanup();
    await database?.drop();
    await sim?.close();
  });

  const first = 0;
  async function waitUntil(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  it('import reads a refresh token on standard input, never echoes it, and names the member', async () => {
    const memberId = sim.control.members.list()[first]!.id;
    const token = sim.control.credentials.issueRefreshToken({ memberId });
    const ran = await pool.runCli(['members', 'import'], { env, input: `${token}\n` });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`connected member ${memberId}`);
    expect(ran.stdout + ran.stderr).not.toContain(token);
  });

  it('import of a refused token exits 1 pointing at `members connect` / `members import`, not at `auth`', async () => {
    const ran = await pool.runCli(['members', 'import'], { env, input: 'rt_bogus\n' });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("rewards-etl: the token endpoint rejected the member's refresh token");
    expect(ran.stderr).toContain('`rewards-etl members connect`');
    expect(ran.stderr).not.toContain('rewards-etl auth');
  });

  it('connect prints the authorize URL, then takes the code from standard input and connects the member', async () => {
    const spawned = pool.spawnCli(['members', 'connect'], { env, openStdin: true });
    await waitUntil(() => /\/oauth\/authorize\?/.test(spawned.stdout()));
    const authorizeUrl = /https?:\/\/\S+\/oauth\/authorize\S+/.exec(spawned.stdout())![0];
    // What the member's browser does: approve, and land on the redirect URI with a code.
    const approved = await fetch(authorizeUrl, { redirect: 'manual' });
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    spawned.child.stdin!.end(`${code}\n`);
    const exit = await spawned.waitForExit(30_000);
    expect(exit.code, spawned.stderr()).toBe(0);
    expect(spawned.stdout()).toContain(`connected member ${sim.control.members.defaultMemberId}`);
    expect(spawned.stdout()).not.toContain(code);
  });

  it('connect on a warehouse that does not exist yet says "migrate first" before showing any authorize URL', async () => {
    const missing = freshDatabaseUrl('members_unmigrated'); // never created
    const ran = await pool.runCli(['members', 'connect'], {
      env: { ...env, DATABASE_URL: missing.url },
      input: '',
    });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/run `rewards-etl migrate` first/);
    expect(ran.stdout).not.toMatch(/oauth\/authorize/);
  });

  it('connect without a code on standard input stops with exit 2 and stores nothing new', async () => {
    const ran = await pool.runCli(['members', 'connect'], { env, input: '' });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/reads the code from standard input/);
  });

  it('list shows each connection and its state; forget removes the member and says what it removed', async () => {
    const memberId = sim.control.members.list()[first]!.id;
    const list = await pool.runCli(['members', 'list'], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${memberId}\\s+active`));
    const forget = await pool.runCli(['members', 'forget', memberId], { env });
    expect(forget.code, forget.stderr).toBe(0);
    expect(forget.stdout).toMatch(/forgot member .*member_connections 1, oauth_tokens 1/);
    const again = await pool.runCli(['members', 'forget', memberId], { env });
    expect(again.stdout).toContain('nothing stored');
    const bad = await pool.runCli(['members', 'forget', 'not-a-member'], { env });
    expect(bad.code).toBe(2);
  });
});
