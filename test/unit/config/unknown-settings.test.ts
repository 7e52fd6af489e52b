import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCliContext } from '../../../src/cli/context.js';
import { warnUnknownSettings } from '../../../src/cli/warn-unknown-settings.js';
import { findUnknownSettings } from '../../../src/config/unknown-settings.js';
import { doctorReport, renderDoctorText } from '../../../src/doctor/doctor-report.js';
import { withSettingWarnings } from '../../../src/doctor/setting-warnings.js';

const SHELL = [
  'PATH',
  'HOME',
  'TERM',
  'LANG',
  'USER',
  'NODE_ENV',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'REDIS_HOST',
  'CI',
];

describe('a variable close to a known setting, or under the product’s prefixes, gets a warning naming both', () => {
  it('typos in the environment and in .env name the setting they resemble', () => {
    const found = findUnknownSettings(
      [...SHELL, 'CHECKINS_LOOKBAK', 'SVC_RATE_LIMT_RPS', 'CHECKINS_LOOKBACK'],
      new Set(['SVC_RATE_LIMT_RPS']),
    );
    expect(found).toEqual([
      { name: 'CHECKINS_LOOKBAK', suggestion: 'CHECKINS_LOOKBACK', source: 'environment' },
      { name: 'SVC_RATE_LIMT_RPS', suggestion: 'SVC_RATE_LIMIT_RPS', source: '.env' },
    ]);
  });

  it('a name under a product prefix far from any setting is still named', () => {
    expect(findUnknownSettings(['SVC_SOMETHING_ELSE'])).toEqual([
      { name: 'SVC_SOMETHING_ELSE', suggestion: undefined, source: 'environment' },
    ]);
  });

  it('other software’s variables and every known setting are left alone', () => {
    expect(findUnknownSettings([...SHELL, 'DATABASE_URL', 'REDIS_URL', 'LOG_LEVEL', 'HTTP_PORT'])).toEqual(
      [],
    );
  });

  it('every command warns at start-up, one JSON log line per name', () => {
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const context = createCliContext(
      { CHECKINS_LOOKBAK: '2h', SVC_RATE_LIMT_RPS: '2', LOG_LEVEL: 'warn' },
      { dotEnvNames: new Set(['SVC_RATE_LIMT_RPS']) },
    );
    // The logger writes to fd 2 itself; a bad configuration falls back to context.stderr.
    const broken = {
      ...context,
      stderr,
      logger: () => {
        throw new Error('no config');
      },
    };
    warnUnknownSettings(broken);
    expect(text).toBe(
      'rewards-etl: warning: unknown setting CHECKINS_LOOKBAK: did you mean CHECKINS_LOOKBACK?\n' +
        'rewards-etl: warning: unknown setting SVC_RATE_LIMT_RPS (in .env): did you mean SVC_RATE_LIMIT_RPS?\n',
    );
  });

  it('doctor prints a WARN line per unknown setting and keeps its verdict OK', () => {
    const report = withSettingWarnings(
      doctorReport([{ check: 'configuration', status: 'ok', detail: 'valid' }]),
      findUnknownSettings(['CHECKINS_LOOKBAK']),
    );
    expect(report.exitCode).toBe(0);
    expect(renderDoctorText(report)).toContain(
      'WARN  configuration                     unknown setting CHECKINS_LOOKBAK: did you mean CHECKINS_LOOKBACK? → rename it to CHECKINS_LOOKBACK',
    );
    expect(report.verdict).toBe('OK with warnings: configuration');
  });
});
