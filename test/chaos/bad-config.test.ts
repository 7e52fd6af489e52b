import { describe, expect, it } from 'vitest';
import { runCli } from './lib/cli-process.js';

// Issue 9, scenario 5: a bad setting stops `run checkins` before any work, exit 2, naming the variable.
const GOOD: Record<string, string> = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/rewards_etl_bad_config_never_created',
  SVC_API_BASE_URL: 'http://127.0.0.1:9/v1',
  SVC_API_KEY: 'sk_chaos_bad_config_key',
  LOG_LEVEL: 'info',
};

const BAD: Array<{ variable: string; value: string; env?: Record<string, string> }> = [
  { variable: 'SVC_API_BASE_URL', value: 'http://127.0.0.1:9/api' },
  { variable: 'DATABASE_URL', value: 'mysql://root@127.0.0.1/x' },
  { variable: 'REDIS_URL', value: 'http://127.0.0.1:6379' },
  { variable: 'REDIS_PREFIX', value: 'has:colon' },
  { variable: 'SVC_RATE_LIMIT_RPS', value: '-3' },
  { variable: 'SVC_REQUEST_TIMEOUT', value: 'soon' },
  { variable: 'CHECKINS_WINDOW', value: '0s' },
  { variable: 'CHECKINS_START_AT', value: 'yesterday' },
  { variable: 'LOG_LEVEL', value: 'loud' },
  {
    variable: 'TOKEN_ENCRYPTION_KEY',
    value: 'c2hvcnQ=',
    env: { SVC_OAUTH_CLIENT_ID: 'client', SVC_OAUTH_CLIENT_SECRET: 'chaos-secret-value' },
  },
  { variable: 'SVC_OAUTH_CLIENT_SECRET', value: '', env: { SVC_OAUTH_CLIENT_ID: 'client' } },
];

describe('bad configuration', () => {
  it('a missing API key exits 2 naming SVC_API_KEY', async () => {
    const { SVC_API_KEY: _omitted, ...env } = GOOD;
    const result = await runCli('bad-config-missing-key', ['run', 'checkins'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SVC_API_KEY');
  });

  // Five at a time: each is a Node start-up (tsx), and the machine has two cores.
  it(`each of ${BAD.length} bad values exits 2 naming its variable`, async () => {
    const outcomes: Array<{ variable: string; value: string; code: number | null; named: boolean }> = [];
    for (let i = 0; i < BAD.length; i += 5) {
      const batch = BAD.slice(i, i + 5);
      outcomes.push(
        ...(await Promise.all(
          batch.map(async ({ variable, value, env }, k) => {
            const result = await runCli(`bad-config-${i + k}-${variable}`, ['run', 'checkins'], {
              ...GOOD,
              ...env,
              [variable]: value,
            });
            return { variable, value, code: result.code, named: result.stderr.includes(variable) };
          }),
        )),
      );
    }
    expect(outcomes.filter((o) => o.code !== 2 || !o.named)).toEqual([]);
  });
});
