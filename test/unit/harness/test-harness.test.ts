import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  missingTools,
  SKIPPED_TOOLS_FILE,
  skippedToolsSummary,
  toolPath,
} from '../../helpers/optional-tools.js';
import { newRunId, runDirOf, runIdOfDatabase, runIdOfRedisKey } from '../../helpers/test-run.js';

// The test harness's own rules (test/run-tests.ts, docs/development.md "How the tests provision
// their own servers"): what counts as a run's leftover, and how a missing tool is reported.
describe('test harness', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('a database or Redis key belongs to the run whose id it ends (or starts) with; nothing else does', () => {
    expect(runIdOfDatabase('rewards_etl_pooler_856c77fc_r7fb58e58')).toBe('7fb58e58');
    expect(runIdOfDatabase('rewards_etl_tpl_r7fb58e58')).toBe('7fb58e58');
    expect(runIdOfDatabase('rewards_etl_canary_r7fb58e58')).toBe('7fb58e58');
    expect(runIdOfDatabase('rewards_etl_demo')).toBeUndefined();
    expect(runIdOfDatabase('rewards_etl_pooler_856c77fc')).toBeUndefined();
    expect(runIdOfDatabase('warehouse_r7fb58e58')).toBeUndefined();
    expect(runIdOfRedisKey('rtest-r7fb58e58-status-e2e-0a1b2c3d:streams:meta')).toBe('7fb58e58');
    expect(runIdOfRedisKey('rewards-etl-canary-r7fb58e58')).toBe('7fb58e58');
    expect(runIdOfRedisKey('rtest-resync-checkins-21007814:budget:spent')).toBeUndefined();
    expect(runIdOfRedisKey('rewards-etl:checkins:meta')).toBeUndefined();
  });

  it('a hidden tool is missing: the skip is recorded for the one summary, naming the package and the command', () => {
    const runId = newRunId();
    const dir = runDirOf(runId)!;
    mkdirSync(dir, { recursive: true });
    try {
      vi.stubEnv('REWARDS_TEST_RUN_ID', runId);
      vi.stubEnv('CI', '');
      vi.stubEnv('REWARDS_TEST_HIDE_TOOLS', 'pgbouncer,promtool');
      expect(toolPath('pgbouncer')).toBeUndefined();
      expect(missingTools('pgbouncer', 'promtool')).toBe(true);
      expect(missingTools('pgbouncer')).toBe(true);
      const records = readFileSync(join(dir, SKIPPED_TOOLS_FILE), 'utf8').trim().split('\n');
      expect(JSON.parse(records[0]!)).toEqual({
        file: 'test/unit/harness/test-harness.test.ts',
        tools: ['pgbouncer', 'promtool'],
      });
      expect(skippedToolsSummary(dir)[0]).toBe(
        '1 file skipped tests: pgbouncer, promtool not installed: apt-get install -y pgbouncer prometheus',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('under CI=true a missing tool fails instead of skipping', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('REWARDS_TEST_HIDE_TOOLS', 'all');
    expect(() => missingTools('faketime')).toThrow(
      'faketime missing under CI=true (apt-get install -y faketime; .ci/run does)',
    );
  });

  it('nothing is recorded when every tool asked for is there', () => {
    vi.stubEnv('REWARDS_TEST_HIDE_TOOLS', 'chromium');
    vi.stubEnv('CI', 'true');
    // Whatever is installed here, a hidden tool is never found and an unhidden one is found where it is.
    expect(toolPath('chromium')).toBeUndefined();
    if (toolPath('faketime') !== undefined) expect(missingTools('faketime')).toBe(false);
  });
});
