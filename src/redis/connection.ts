import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from '../log.js';
import type { HostPort, RedisSettings } from './settings.js';
import { FailoverSafeSentinelConnector } from './failover-safe-sentinel-connector.js';
import { superviseClient } from './supervised-client.js';

// The one place a Redis client is built. Every user (the worker's queues and BullMQ's blocking
// connections, which BullMQ duplicates from ours, the shared rate limiter, status, doctor, demo,
// bench) goes through here, so a Sentinel or Cluster deployment is one setting, not a code path.

/** A standalone or Sentinel client (`Redis`) or a Cluster client: both speak the commands we use. */
export type RedisClient = Redis | Cluster;

/**
 * `long-lived`: worker, queues, limiter, `run`, `backfill`: commands wait through a reconnect or a
 * failover instead of failing (BullMQ requires `maxRetriesPerRequest: null` on its connections).
 * `one-shot`: `status`, `doctor`: connect lazily, give up within seconds, report what was unreadable.
 */
export type ConnectionRole = 'long-lived' | 'one-shot';

export interface RedisConnectionOptions {
  role: ConnectionRole;
  /** Errors are logged here (warn for long-lived clients, debug for one-shot ones). */
  logger?: Logger;
  /** CLIENT SETNAME, so `CLIENT LIST` on the server says who holds a connection (spaces become dashes). */
  connectionName?: string;
  /**
   * Long-lived clients only: a connection that ended without being closed and could not be
   * rebuilt (supervised-client.ts). By default the process exits 1 after one log line.
   */
  onLost?: (name: string) => void;
}

/** How long one attempt to reach a node may take before it counts as failed. */
const CONNECT_TIMEOUT_MS = 5_000;
const ONE_SHOT_CONNECT_TIMEOUT_MS = 2_000;

/**
 * A reconnect backoff that stays short (failover is measured in seconds, and a worker that waits
 * 20 s after a promotion is 20 s of idle), capped at 2 s.
 */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 5), 2_000);
}

/**
 * After a failover a connection may still reach the old primary, now a replica (a DNS name that
 * still points at it, or a Sentinel answer older than the promotion): writes fail with READONLY.
 * Reconnecting (2 = reconnect and resend the command) finds the new primary.
 */
export function reconnectOnReadOnly(error: Error): 2 | false {
  return error.message.startsWith('READONLY') ? 2 : false;
}

export function createRedisClient(settings: RedisSettings, options: RedisConnectionOptions): RedisClient {
  const client = buildClient(settings, options);
  const logger = options.logger;
  client.on('error', (error: Error) => {
    if (options.role === 'one-shot') logger?.debug({ err: error }, 'redis connection error');
    else logger?.warn({ err: error }, 'redis connection error');
  });
  return options.role === 'long-lived' ? supervise(client, options) : client;
}

/**
 * A one-shot client and why it last failed (`status`, `doctor`): it connects with `connect()`, gives
 * up quickly instead of waiting for Redis to come back, and its errors go to debug level.
 */
export function createOneShotClient(
  settings: RedisSettings,
  logger?: Logger,
): { redis: RedisClient; lastError: () => Error | undefined } {
  const redis = createRedisClient(settings, { role: 'one-shot', ...(logger ? { logger } : {}) });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  return { redis, lastError: () => lastError };
}

function buildClient(settings: RedisSettings, options: RedisConnectionOptions): RedisClient {
  const nodeOptions = dataNodeOptions(settings, options);
  const { topology } = settings;
  switch (topology.mode) {
    case 'standalone':
      return new Redis(topology.url.reveal(), nodeOptions);
    case 'sentinel':
      return new Redis({
        ...nodeOptions,
        sentinels: topology.sentinels.map(toAddress),
        name: topology.name,
        role: 'master',
        ...(topology.sentinelPassword === undefined
          ? {}
          : { sentinelPassword: topology.sentinelPassword.reveal() }),
        // Subscribes to the Sentinels' +switch-master: a promotion moves this client at once, even
        // when the old primary is still up (demoted) and would otherwise keep its connections.
        failoverDetector: options.role === 'long-lived',
        ...failoverSafeSentinelOptions(options),
        sentinelRetryStrategy:
          options.role === 'one-shot' ? (times) => (times > 2 ? null : 200) : reconnectDelayMs,
        ...(settings.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      });
    case 'cluster':
      return new Cluster(topology.nodes.map(toAddress), clusterOptions(settings, options, nodeOptions));
  }
}

function toAddress(node: HostPort): { host: string; port: number } {
  return { host: node.host, port: node.port };
}

function dataNodeOptions(settings: RedisSettings, options: RedisConnectionOptions): RedisOptions {
  const oneShot = options.role === 'one-shot';
  return {
    ...(settings.username === undefined ? {} : { username: settings.username }),
    ...(settings.password === undefined ? {} : { password: settings.password.reveal() }),
    // Standalone: `rediss://` already turns TLS on; the URL's host is the name checked.
    ...(settings.tls && settings.topology.mode !== 'standalone' ? { tls: {} } : {}),
    // Redis refuses names with spaces, and ioredis drops that refusal silently.
    ...(options.connectionName === undefined
      ? {}
      : { connectionName: options.connectionName.trim().replace(/\s+/g, '-') }),
    connectTimeout: oneShot ? ONE_SHOT_CONNECT_TIMEOUT_MS : CONNECT_TIMEOUT_MS,
    enableReadyCheck: true,
    reconnectOnError: reconnectOnReadOnly,
    ...(oneShot
      ? {
          lazyConnect: true,
          maxRetriesPerRequest: 1,
          retryStrategy: (times: number) => (times > 2 ? null : 200),
        }
      : { maxRetriesPerRequest: null, retryStrategy: reconnectDelayMs }),
  };
}

function clusterOptions(
  settings: RedisSettings,
  options: RedisConnectionOptions,
  nodeOptions: RedisOptions,
): ClusterOptions {
  const oneShot = options.role === 'one-shot';
  return {
    redisOptions: nodeOptions,
    // Every command to a primary: a replica may lag, and BullMQ's scripts write.
    scaleReads: 'master',
    // ioredis's Cluster ready check (CLUSTER INFO) fails while a failover is under way, and a
    // connect() that meets a failed check then never settles: BullMQ's blocking connection waits on
    // it for ever and its worker takes no job again (seen in the Cluster failover test). Without the
    // check, commands sent too early meet CLUSTERDOWN and are retried (retryDelayOnClusterDown).
    enableReadyCheck: false,
    ...(oneShot ? { lazyConnect: true } : {}),
    clusterRetryStrategy: oneShot ? (times) => (times > 2 ? null : 200) : reconnectDelayMs,
    // While a dead primary's replica is being promoted, its slots answer "connection closed" or
    // CLUSTERDOWN: a long-lived client re-reads the slot map and retries for up to ~30 s (100
    // redirections 300 ms apart) instead of failing the command.
    retryDelayOnFailover: 300,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 300,
    maxRedirections: oneShot ? 16 : 100,
    slotsRefreshTimeout: 2_000,
    // TLS endpoints of managed clusters (ElastiCache) present certificates for their DNS names: keep
    // the name the node was given instead of resolving it to an IP before the handshake.
    ...(settings.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
  };
}

// --- Failover safety (issue 38): every long-lived client survives a failover or says so. ---

/** A Sentinel that accepted the connection but does not answer (frozen) is skipped after this. */
const SENTINEL_COMMAND_TIMEOUT_MS = 3_000;

/**
 * Sentinel mode: the connector that does not end a client whose primary search a promotion
 * interrupted (failover-safe-sentinel-connector.ts), and a bound on each Sentinel's answer (the
 * connect timeout covers only the TCP connect, which a frozen Sentinel's kernel still accepts).
 */
function failoverSafeSentinelOptions(options: RedisConnectionOptions): RedisOptions {
  return {
    sentinelCommandTimeout: SENTINEL_COMMAND_TIMEOUT_MS,
    ...(options.role === 'long-lived' ? { Connector: FailoverSafeSentinelConnector } : {}),
  };
}

/** Watches a long-lived client (and BullMQ's copies of it) for an `end` nobody asked for. */
function supervise(client: RedisClient, options: RedisConnectionOptions): RedisClient {
  return superviseClient(client, {
    name: options.connectionName ?? 'redis',
    logger: options.logger,
    onLost: options.onLost,
  });
}
