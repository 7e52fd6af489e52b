import { Secret } from '../secret.js';

// Where Redis is and how to reach it: one standalone server (REDIS_URL), a Sentinel set
// (REDIS_SENTINELS + REDIS_SENTINEL_NAME) or a Cluster (REDIS_CLUSTER_NODES). Pure: parsed from the
// variables config/config.ts reads, problems returned with the variable they name (config.ts throws them).

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTopology =
  | { mode: 'standalone'; url: Secret }
  | { mode: 'sentinel'; sentinels: HostPort[]; name: string; sentinelPassword: Secret | undefined }
  | { mode: 'cluster'; nodes: HostPort[] };

export type RedisMode = RedisTopology['mode'];

export interface RedisSettings {
  topology: RedisTopology;
  /** REDIS_USERNAME (an ACL user); a standalone URL's own user name wins. */
  username: string | undefined;
  /** REDIS_PASSWORD: the data nodes' password (never the Sentinels'); standalone: when the URL has none. */
  password: Secret | undefined;
  /** TLS to the data nodes (and the Sentinels): `rediss://` for standalone, REDIS_TLS otherwise. */
  tls: boolean;
  /** Every key the project writes starts with this (REDIS_PREFIX, hash-tagged in Cluster mode). */
  keyPrefix: string;
}

export interface RedisVariables {
  REDIS_URL?: string | undefined;
  REDIS_PREFIX: string;
  REDIS_SENTINELS?: string | undefined;
  REDIS_SENTINEL_NAME?: string | undefined;
  REDIS_SENTINEL_PASSWORD?: Secret | undefined;
  REDIS_CLUSTER_NODES?: string | undefined;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: Secret | undefined;
  REDIS_TLS?: boolean | undefined;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** A setting that cannot be used as written: config.ts turns it into a ConfigError (exit 2). */
export class RedisSettingProblem extends Error {
  override readonly name = 'RedisSettingProblem';
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

/** `host:port,host:port` (IPv6 as `[::1]:26379`); throws a plain Error saying which entry is wrong. */
export function parseHostPorts(text: string): HostPort[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error('must list at least one host:port');
  return entries.map((entry) => {
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]/]+)):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[3]);
    if (match === null || !(port >= 1 && port <= 65_535))
      throw new Error(`"${entry}" is not host:port (IPv6 as [::1]:6379)`);
    return { host: match[1] ?? match[2] ?? '', port };
  });
}

/**
 * The hash tag of a key prefix, as Redis Cluster computes it: the text between the first `{` and
 * the first `}` after it, when not empty. `undefined` when the prefix has none.
 */
export function hashTagOf(prefix: string): string | undefined {
  const open = prefix.indexOf('{');
  if (open < 0) return undefined;
  const close = prefix.indexOf('}', open + 1);
  if (close <= open + 1) return undefined;
  return prefix.slice(open + 1, close);
}

/**
 * REDIS_PREFIX as the keys use it. In a Cluster, BullMQ's scripts touch several keys of a queue at
 * once and must find them in one slot, and the planner moves jobs between our queues: every key the
 * project writes therefore carries one hash tag. A prefix without one is wrapped whole
 * (`rewards-etl` → `{rewards-etl}`); one that has a tag (`{etl}-prod`) is kept. Standalone and
 * Sentinel keep the prefix as written, so an existing deployment's keys do not move.
 */
export function effectiveKeyPrefix(prefix: string, mode: RedisMode): string {
  if (mode !== 'cluster' || hashTagOf(prefix) !== undefined) return prefix;
  return `{${prefix}}`;
}

/** Braces are allowed only as one well-formed, non-empty hash tag. */
export function prefixProblem(prefix: string): string | undefined {
  const braces = prefix.replace(/[^{}]/g, '');
  if (braces === '') return undefined;
  if (braces !== '{}' || hashTagOf(prefix) === undefined)
    return 'braces only as one non-empty hash tag, e.g. {rewards-etl} or {etl}-prod';
  return undefined;
}

/** Picks the mode and checks that the variables given belong to it; throws RedisSettingProblem. */
export function redisSettingsFrom(vars: RedisVariables): RedisSettings {
  const prefixIssue = prefixProblem(vars.REDIS_PREFIX);
  if (prefixIssue !== undefined) throw new RedisSettingProblem('REDIS_PREFIX', prefixIssue);
  const topology = topologyFrom(vars);
  if (vars.REDIS_SENTINEL_PASSWORD !== undefined && topology.mode !== 'sentinel')
    throw new RedisSettingProblem('REDIS_SENTINEL_PASSWORD', 'only with REDIS_SENTINELS');
  let tls = vars.REDIS_TLS ?? false;
  if (topology.mode === 'standalone') {
    if (vars.REDIS_TLS !== undefined)
      throw new RedisSettingProblem(
        'REDIS_TLS',
        'with REDIS_URL, TLS is chosen by the scheme: write rediss:// (REDIS_TLS is for Sentinel and Cluster)',
      );
    const url = new URL(topology.url.reveal());
    tls = url.protocol === 'rediss:';
    if (vars.REDIS_PASSWORD !== undefined && url.password !== '')
      throw new RedisSettingProblem(
        'REDIS_PASSWORD',
        'REDIS_URL already carries a password: set it in one place only',
      );
  }
  return {
    topology,
    username: vars.REDIS_USERNAME,
    password: vars.REDIS_PASSWORD,
    tls,
    keyPrefix: effectiveKeyPrefix(vars.REDIS_PREFIX, topology.mode),
  };
}

function topologyFrom(vars: RedisVariables): RedisTopology {
  const sentinels = vars.REDIS_SENTINELS;
  const cluster = vars.REDIS_CLUSTER_NODES;
  if (sentinels !== undefined && cluster !== undefined)
    throw new RedisSettingProblem(
      'REDIS_CLUSTER_NODES',
      'set REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both',
    );
  const elsewhere = sentinels !== undefined ? 'REDIS_SENTINELS' : 'REDIS_CLUSTER_NODES';
  if ((sentinels !== undefined || cluster !== undefined) && vars.REDIS_URL !== undefined)
    throw new RedisSettingProblem(
      'REDIS_URL',
      `names one standalone server: leave it unset with ${elsewhere} (credentials go in REDIS_USERNAME and REDIS_PASSWORD)`,
    );
  if (sentinels === undefined && vars.REDIS_SENTINEL_NAME !== undefined)
    throw new RedisSettingProblem('REDIS_SENTINELS', 'required with REDIS_SENTINEL_NAME');
  if (sentinels !== undefined) {
    if (vars.REDIS_SENTINEL_NAME === undefined)
      throw new RedisSettingProblem(
        'REDIS_SENTINEL_NAME',
        'required with REDIS_SENTINELS: the name the Sentinels monitor the primary under',
      );
    return {
      mode: 'sentinel',
      sentinels: hostPortsOf('REDIS_SENTINELS', sentinels),
      name: vars.REDIS_SENTINEL_NAME,
      sentinelPassword: vars.REDIS_SENTINEL_PASSWORD,
    };
  }
  if (cluster !== undefined) return { mode: 'cluster', nodes: hostPortsOf('REDIS_CLUSTER_NODES', cluster) };
  return { mode: 'standalone', url: new Secret(vars.REDIS_URL ?? DEFAULT_REDIS_URL) };
}

function hostPortsOf(variable: string, text: string): HostPort[] {
  try {
    return parseHostPorts(text);
  } catch (error) {
    throw new RedisSettingProblem(variable, (error as Error).message);
  }
}

/** One line for logs, `doctor` and `status`: the mode and where, never a password. */
export function describeRedis(settings: RedisSettings): string {
  const list = (nodes: HostPort[]) =>
    nodes.map((node) => `${node.host.includes(':') ? `[${node.host}]` : node.host}:${node.port}`).join(', ');
  const tls = settings.tls ? ', TLS' : '';
  const { topology } = settings;
  switch (topology.mode) {
    case 'standalone': {
      const url = new URL(topology.url.reveal());
      return `standalone ${url.host}${tls}`;
    }
    case 'sentinel':
      return `sentinel "${topology.name}" via ${list(topology.sentinels)}${tls}`;
    case 'cluster':
      return `cluster via ${list(topology.nodes)}${tls}`;
  }
}
