import type { RedisMode } from '../redis/settings.js';
import { fail, message, ok, skip, warn, type Probe } from './check-lines.js';
import type { CheckResult } from './doctor-report.js';

// Pure verdicts on what the Redis probe saw: version, settings, eviction policy, failover.

/** `INFO` text (`key:value` lines, `#` section headers) as a map. */
export function parseRedisInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** BullMQ refuses Redis below 5.0.0 and recommends 6.2.0 or newer. */
export const REDIS_MINIMUM = [5, 0, 0] as const;
export const REDIS_RECOMMENDED = [6, 2, 0] as const;

function versionBelow(version: string, floor: readonly number[]): boolean {
  const parts = versionParts(version);
  for (let i = 0; i < floor.length; i++) {
    const have = parts[i] ?? 0;
    const need = floor[i] ?? 0;
    if (have !== need) return have < need;
  }
  return false;
}

/** What `doctor` read from each primary: standalone and Sentinel have one, a Cluster several. */
export interface RedisFindings {
  primaries: Array<{ address: string; info: string }>;
}

/** The settings to check, per mode, when Redis cannot be reached. */
const REDIS_SETTINGS_HINT: Record<RedisMode, string> = {
  standalone: 'check REDIS_URL and that Redis runs',
  sentinel:
    'check REDIS_SENTINELS, REDIS_SENTINEL_NAME, the passwords, and that the Sentinels know a primary',
  cluster: 'check REDIS_CLUSTER_NODES, REDIS_PASSWORD, and that the cluster is up (cluster_state:ok)',
};

/** `describeRedis` of the settings (mode and where), then what the primaries said: version, count. */
export function judgeRedis(probe: Probe<RedisFindings>, mode: RedisMode, where: string): CheckResult {
  if (!probe.ok)
    return fail('redis', `${where}: unreachable: ${message(probe.error)}`, REDIS_SETTINGS_HINT[mode]);
  const { primaries } = probe.value;
  const versions = [...new Set(primaries.map((p) => parseRedisInfo(p.info).get('redis_version') ?? '?'))];
  const lowest = versions
    .filter((v) => v !== '?')
    .reduce<string | undefined>(
      (low, v) => (low === undefined || versionBelow(v, versionParts(low)) ? v : low),
      undefined,
    );
  const layout =
    mode === 'cluster'
      ? `${primaries.length} primaries (${primaries.map((p) => p.address).join(', ')})`
      : `primary ${primaries[0]?.address ?? '?'}`;
  const seen = `${where}: reachable, ${layout}`;
  if (lowest === undefined) return warn('redis', `${seen}, version unknown (no redis_version in INFO)`);
  const version = `Redis ${versions.join(', ')}`;
  if (versionBelow(lowest, REDIS_MINIMUM))
    return fail(
      'redis',
      `${seen}, ${version}: BullMQ needs ${REDIS_MINIMUM.join('.')} or newer`,
      'upgrade Redis',
    );
  if (versionBelow(lowest, REDIS_RECOMMENDED))
    return warn('redis', `${seen}, ${version}: BullMQ recommends ${REDIS_RECOMMENDED.join('.')} or newer`);
  return ok('redis', `${seen}, ${version}`);
}

function versionParts(version: string): number[] {
  return version.split('.').map((part) => Number.parseInt(part, 10) || 0);
}

/**
 * BullMQ keeps jobs, schedulers and locks as ordinary keys: under any eviction policy a full Redis
 * silently deletes some of them (lost schedules come back within 30 s, but a job or its lock
 * evicted mid-run is gone). Only `noeviction` makes a full Redis fail loudly instead.
 */
export function judgeEvictionPolicy(probe: Probe<RedisFindings>): CheckResult {
  if (!probe.ok) return skip('redis eviction', 'not checked: Redis unreachable');
  const { primaries } = probe.value;
  const policies = primaries.map((p) => ({
    address: p.address,
    policy: parseRedisInfo(p.info).get('maxmemory_policy'),
  }));
  const where = (list: typeof policies) =>
    primaries.length === 1 ? '' : ` on ${list.map((p) => p.address).join(', ')}`;
  const unknown = policies.filter((p) => p.policy === undefined);
  const evicting = policies.filter((p) => p.policy !== undefined && p.policy !== 'noeviction');
  if (evicting.length > 0) {
    const names = [...new Set(evicting.map((p) => p.policy))].join(', ');
    return warn(
      'redis eviction',
      `maxmemory-policy ${names}${where(evicting)}: when Redis is full it evicts keys, and BullMQ's jobs, locks and schedules are keys (queued work silently lost)`,
      'set maxmemory-policy noeviction on every primary (BullMQ requires it), or give this Redis its own instance',
    );
  }
  if (unknown.length > 0)
    return warn(
      'redis eviction',
      `maxmemory-policy unknown${where(unknown)} (no maxmemory_policy in INFO)`,
      'make sure it is noeviction',
    );
  return ok(
    'redis eviction',
    primaries.length === 1
      ? 'maxmemory-policy noeviction'
      : `maxmemory-policy noeviction on all ${primaries.length} primaries`,
  );
}

/**
 * What survives the loss of a primary. Without a replica, nothing takes over: the pipeline waits for
 * that server to come back. Without AOF (and with a replica that missed the last writes), a restart
 * or a failover loses recent queue writes: schedules are restored by the workers and windows
 * re-planned from Postgres, but alert-catch-up and window jobs wait for the next planner tick.
 */
export function judgeRedisFailover(probe: Probe<RedisFindings>): CheckResult {
  if (!probe.ok) return skip('redis failover', 'not checked: Redis unreachable');
  const { primaries } = probe.value;
  const facts = primaries.map((p) => {
    const info = parseRedisInfo(p.info);
    return {
      address: p.address,
      replicas: Number(info.get('connected_slaves') ?? '0') || 0,
      aof: info.get('aof_enabled') === '1',
    };
  });
  const lonely = facts.filter((f) => f.replicas === 0);
  const noAof = facts.filter((f) => !f.aof);
  const named = (list: typeof facts) =>
    primaries.length === 1 ? 'the primary' : list.map((f) => f.address).join(', ');
  const problems = [
    ...(lonely.length > 0 ? [`no replica for ${named(lonely)}: nothing takes over if it fails`] : []),
    ...(noAof.length > 0
      ? [
          `no AOF (appendonly no) on ${named(noAof)}: a restart loses what was written since the last snapshot`,
        ]
      : []),
  ];
  if (problems.length > 0)
    return warn(
      'redis failover',
      problems.join('; '),
      'run a replica per primary (Sentinel or Cluster, or a managed service with automatic failover) and appendonly yes where the service allows it',
    );
  const replicas = facts.map((f) => f.replicas).join(', ');
  return ok('redis failover', `every primary has a replica (${replicas}) and AOF on`);
}
