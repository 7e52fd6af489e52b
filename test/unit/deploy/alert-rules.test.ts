import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KNOWN_LABEL_VALUES, createMetrics } from '../../../src/metrics.js';
import { STREAM_NAMES } from '../../../src/sync/stream-facts.js';
import { missingTools, toolPath } from '../../helpers/optional-tools.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);

/** `name{a="x",b="y"} 0` lines of the registry's exposition, as `name{…}` → value. */
async function exposition(): Promise<Map<string, number>> {
  const text = await createMetrics().registry.metrics();
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(rewards_etl_\w+\{[^}]*\}) (\S+)$/.exec(line);
    if (match) series.set(match[1] ?? '', Number(match[2]));
  }
  return series;
}

describe('every labelled series the alert rules and the dashboard select exists at 0 from start-up', () => {
  it('alert deliveries, token refreshes, passes, rows and rejections: one series per known label value', async () => {
    const series = await exposition();
    const expected = [
      ...KNOWN_LABEL_VALUES.alertDeliveryOutcome.map(
        (outcome) => `rewards_etl_alert_deliveries_total{outcome="${outcome}"}`,
      ),
      ...KNOWN_LABEL_VALUES.oauthRefreshOutcome.map(
        (outcome) => `rewards_etl_oauth_token_refreshes_total{outcome="${outcome}"}`,
      ),
      ...STREAM_NAMES.flatMap((stream) => [
        ...KNOWN_LABEL_VALUES.passStatus.map(
          (status) => `rewards_etl_passes_total{stream="${stream}",status="${status}"}`,
        ),
        `rewards_etl_rows_ingested_total{stream="${stream}"}`,
        `rewards_etl_records_rejected_total{stream="${stream}"}`,
      ]),
    ];
    for (const name of expected) expect(series.get(name), name).toBe(0);
  });
});

describe.skipIf(missingTools('promtool'))(
  'promtool test rules: each alert fires on its series and resolves on recovery',
  () => {
    it('deploy/prometheus/rewards-etl-alerts.test.yml passes', async () => {
      const { stdout } = await run(
        toolPath('promtool') ?? 'promtool',
        ['test', 'rules', 'rewards-etl-alerts.test.yml'],
        {
          cwd: `${ROOT}deploy/prometheus`,
        },
      );
      expect(stdout).toContain('SUCCESS');
    });

    it('the test file covers every alert of the rules file, each firing and resolving', async () => {
      const { readFile } = await import('node:fs/promises');
      const rules = await readFile(`${ROOT}deploy/prometheus/rewards-etl-alerts.yml`, 'utf8');
      const tests = await readFile(`${ROOT}deploy/prometheus/rewards-etl-alerts.test.yml`, 'utf8');
      const alerts = [...rules.matchAll(/^\s*- alert:\s*(\S+)/gm)].map((match) => match[1] ?? '');
      expect(alerts.length).toBeGreaterThan(10);
      for (const alert of alerts) {
        const blocks = tests.split(/\n {6}- alertname: /).filter((block) => block.startsWith(`${alert}\n`));
        expect(
          blocks.some((block) => block.includes('exp_labels')),
          `${alert} fires`,
        ).toBe(true);
        expect(
          blocks.some((block) => /exp_alerts: \[\]/.test(block)),
          `${alert} resolves`,
        ).toBe(true);
      }
    });
  },
);
