import { requireApiBaseUrl, requireApiKey, type Config } from '../config/config.js';
import { ConfigError } from '../config/config-error.js';
import { knownSecrets, scrubSecrets } from '../status/collect-status.js';
import { describeRedis } from '../redis/settings.js';
import { splitDatabaseUrl } from '../warehouse/database.js';
import { doctorReport, type CheckResult, type DoctorReport } from './doctor-report.js';
import type { Probe } from './check-lines.js';
import {
  judgeApi,
  judgeMigrations,
  judgeOAuth,
  judgePostgres,
  judgeScope,
  judgeTopology,
  judgeWebhook,
  type ApiAnswer,
  type OAuthFindings,
} from './judge.js';
import { judgeClock } from './judge-clock.js';
import { judgeEvictionPolicy, judgeRedis, judgeRedisFailover } from './judge-redis.js';
import { probePostgresOffset, probeRedisOffset } from './clock-probes.js';
import { probeConnectionTopology } from './topology-probe.js';
import {
  PROBE_TIMEOUT_MS,
  apiGet,
  probeMigrations,
  probeOAuthConnection,
  probePostgres,
  probeRedis,
  probeStoredOAuth,
  probeWebhook,
  type ApiExchange,
  type ProbeDeps,
} from './probes.js';

/** Any UUID works for the scope probe when the API lists no restaurant: the scope is checked first. */
const NIL_RESTAURANT = '00000000-0000-4000-8000-000000000000';

/**
 * The configuration line. Bad configuration is what `loadConfig` rejects plus what a worker
 * cannot start without (the API base URL and key): exit 2, and nothing else is probed.
 */
export function checkConfiguration(load: () => Config): { config: Config } | { report: DoctorReport } {
  try {
    const config = load();
    requireApiBaseUrl(config);
    requireApiKey(config);
    return { config };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { report: doctorReport([{ check: 'configuration', status: 'fail', detail: error.message }]) };
  }
}

function describeConfiguration(config: Config): CheckResult {
  const parts = [
    `API ${config.api.baseUrl ?? '?'}`,
    config.oauth === undefined ? 'OAuth not configured' : 'OAuth configured',
    config.alerts.webhookUrl === undefined ? 'no webhook' : 'webhook configured',
  ];
  return { check: 'configuration', status: 'ok', detail: `valid (${parts.join(', ')})` };
}

/** Every check after the configuration's, probing Postgres, Redis and the API in parallel. */
export async function runDoctorChecks(deps: ProbeDeps): Promise<DoctorReport> {
  const { config } = deps;
  const database = splitDatabaseUrl(config.databaseUrl.reveal()).name;
  const apiKey = { kind: 'api-key' as const, value: config.api.apiKey?.reveal() ?? '' };
  const nowMs = deps.nowMs ?? Date.now;
  const [postgres, redis, api] = await Promise.all([
    probePostgres(deps.db),
    probeRedis(deps),
    apiGet(deps, '/restaurants', { page_size: 1 }, apiKey),
  ]);
  const [migrations, topology, postgresClock, redisClock] = await Promise.all([
    postgres.ok ? probeMigrations(deps.db) : null,
    postgres.ok ? probeConnectionTopology(config.databaseUrl.reveal(), PROBE_TIMEOUT_MS) : null,
    postgres.ok ? probePostgresOffset(deps.db, nowMs, PROBE_TIMEOUT_MS) : null,
    redis.ok ? probeRedisOffset(deps.redis, nowMs, PROBE_TIMEOUT_MS) : null,
  ]);
  const apiLine = judgeApi(api.probe, config.api.baseUrl ?? '', config.api.userAgent);
  const [scopes, oauth, webhook] = await Promise.all([
    // A refused key or an unreachable API would fail all three scopes for the same reason: say it once.
    apiLine.status === 'fail' ? Promise.resolve(null) : probeScopes(deps, api, apiKey),
    oauthFindings(deps, migrations?.ok === true && migrations.value.pending.length === 0),
    config.alerts.webhookUrl === undefined || config.alerts.webhookSecret === undefined
      ? Promise.resolve(null)
      : probeWebhook(
          config.alerts.webhookUrl,
          config.api.userAgent,
          config.alerts.webhookAuthorization?.reveal(),
        ),
  ]);
  const checks: CheckResult[] = [
    describeConfiguration(config),
    judgePostgres(postgres, database),
    judgeTopology(topology),
    judgeMigrations(migrations),
    judgeRedis(redis, config.redis.topology.mode, describeRedis(config.redis)),
    judgeEvictionPolicy(redis),
    judgeRedisFailover(redis),
    apiLine,
    judgeScope('read:checkins', scopes?.checkins ?? null),
    judgeScope('read:restaurant_challenges', scopes?.challenges ?? null),
    judgeScope('read:balance', scopes?.balance ?? null),
    judgeOAuth(oauth),
    judgeWebhook({
      url: config.alerts.webhookUrl,
      hasSecret: config.alerts.webhookSecret !== undefined,
      alertsRaised: config.oauth !== undefined,
      probe: webhook,
    }),
    judgeClock({
      ...api,
      safetyLagMs: config.checkins.safetyLagMs,
      postgres: postgresClock,
      redis: redisClock,
    }),
  ];
  return scrubSecrets(doctorReport(checks), knownSecrets(config));
}

/** The three API-key scopes, each with the cheapest request that needs it. */
async function probeScopes(deps: ProbeDeps, api: ApiExchange, apiKey: { kind: 'api-key'; value: string }) {
  const restaurant = firstRestaurantId(api.probe) ?? NIL_RESTAURANT;
  const [checkins, challenges, balance] = await Promise.all([
    apiGet(deps, '/check_ins', { page_size: 1 }, apiKey),
    apiGet(deps, '/challenges', { restaurant, page_size: 1 }, apiKey),
    apiGet(deps, '/balance', {}, apiKey),
  ]);
  return { checkins: checkins.probe, challenges: challenges.probe, balance: balance.probe };
}

function firstRestaurantId(probe: Probe<ApiAnswer>): string | undefined {
  if (!probe.ok) return undefined;
  const list = (probe.value.json as { restaurants?: Array<{ id?: unknown }> } | null)?.restaurants;
  const id = Array.isArray(list) ? list[0]?.id : undefined;
  return typeof id === 'string' ? id : undefined;
}

async function oauthFindings(deps: ProbeDeps, warehouseReady: boolean): Promise<OAuthFindings> {
  const configured = deps.config.oauth !== undefined;
  if (!configured || !warehouseReady) return { configured, stored: null, probe: null };
  const stored = await probeStoredOAuth(deps.db);
  if (!stored.ok) return { configured, stored: null, probe: null };
  if (stored.value.needsReauthorization) return { configured, stored: stored.value, probe: null };
  return { configured, stored: stored.value, probe: await probeOAuthConnection(deps) };
}
