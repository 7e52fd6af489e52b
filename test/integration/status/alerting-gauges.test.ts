import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/clock.js';
import { refreshGauges } from '../../../src/http/refresh-gauges.js';
import { createMetrics } from '../../../src/metrics.js';
import { bindApiMetrics } from '../../../src/runtime/api-metrics-binding.js';
import { collectGaugeFigures } from '../../../src/status/collect-status.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { NOW, seedStatusData, statusTestConfig } from './seed-status.js';

// The gauges the Prometheus alert rules in deploy/ need beyond the status page's own figures.

describe('gauges for alert rules: last successful pass, schedule interval, OAuth re-authorization', () => {
  let database: TestDatabase;
  const config = statusTestConfig('unused-prefix');

  beforeAll(async () => {
    database = await createTestDatabase('alerting_gauges');
    await seedStatusData(database.db);
  });

  afterAll(async () => {
    await database.drop();
  });

  async function scrape(): Promise<(series: string) => string | undefined> {
    const metrics = createMetrics();
    const figures = await collectGaugeFigures({ db: database.db, config, clock: fixedClock(NOW) });
    refreshGauges(metrics, figures);
    const text = await metrics.registry.metrics();
    return (series) => new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1];
  }

  it('the start of the latest successful pass per stream, absent for a stream that never succeeded', async () => {
    const sample = await scrape();
    const secondsAgo = (minutes: number) => String((NOW.getTime() - minutes * 60_000) / 1000);
    expect(sample('rewards_etl_stream_last_success_timestamp_seconds{stream="restaurants"}')).toBe(
      secondsAgo(10),
    );
    // The latest balance pass failed: the gauge keeps the last success, 20 minutes ago.
    expect(sample('rewards_etl_stream_last_success_timestamp_seconds{stream="balance"}')).toBe(
      secondsAgo(20),
    );
    expect(sample('rewards_etl_stream_last_success_timestamp_seconds{stream="locations"}')).toBeUndefined();
    expect(sample('rewards_etl_stream_interval_seconds{stream="restaurants"}')).toBe('3600');
    expect(sample('rewards_etl_stream_interval_seconds{stream="payment_intents"}')).toBe('5');
  });

  it('OAuth needs re-authorization: 0 while the refresh token works, 1 once it was revoked', async () => {
    expect((await scrape())('rewards_etl_oauth_needs_reauthorization')).toBe('0');
    await database.db
      .updateTable('rewards.oauth_tokens')
      .set({ last_error: 'invalid_grant: the refresh token was rejected', last_error_at: NOW })
      .execute();
    expect((await scrape())('rewards_etl_oauth_needs_reauthorization')).toBe('1');
  });

  it('token refreshes are counted by outcome', async () => {
    const metrics = createMetrics();
    const hooks = bindApiMetrics(metrics);
    hooks.tokenRefreshed('ok');
    hooks.tokenRefreshed('revoked');
    const text = await metrics.registry.metrics();
    expect(text).toContain('rewards_etl_oauth_token_refreshes_total{outcome="ok"} 1');
    expect(text).toContain('rewards_etl_oauth_token_refreshes_total{outcome="revoked"} 1');
  });
});
