import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { ConfigError } from '../../../src/config/config-error.js';

const base = { SVC_API_BASE_URL: 'http://127.0.0.1:9/v1' };

function problem(env: Record<string, string>): { variable: string; message: string } | null {
  try {
    loadConfig({ ...base, ...env });
    return null;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { variable: error.message.split(':')[0]!, message: error.message };
  }
}

describe('CHECKINS_RETENTION and CHECKINS_ROLLUP_RETENTION: off by default, bad values name the variable', () => {
  it('are off by default', () => {
    const config = loadConfig(base);
    expect(config.checkins.retentionMs).toBeUndefined();
    expect(config.checkins.rollupRetentionMs).toBeUndefined();
  });

  it('read durations', () => {
    const config = loadConfig({ ...base, CHECKINS_RETENTION: '400d', CHECKINS_ROLLUP_RETENTION: '3650d' });
    expect(config.checkins.retentionMs).toBe(400 * 86_400_000);
    expect(config.checkins.rollupRetentionMs).toBe(3650 * 86_400_000);
  });

  it.each([
    [{ CHECKINS_RETENTION: 'a year' }, 'CHECKINS_RETENTION'],
    [{ CHECKINS_RETENTION: '12h' }, 'CHECKINS_RETENTION'],
    [{ CHECKINS_RETENTION: '2d' }, 'CHECKINS_RETENTION'], // inside the look-back + history window
    [{ CHECKINS_RETENTION: '400d', CHECKINS_ROLLUP_RETENTION: '30d' }, 'CHECKINS_ROLLUP_RETENTION'],
    [{ CHECKINS_ROLLUP_RETENTION: '400d' }, 'CHECKINS_ROLLUP_RETENTION'],
  ])('%j is refused naming %s', (env, variable) => {
    expect(problem(env)?.variable).toBe(variable);
  });
});
