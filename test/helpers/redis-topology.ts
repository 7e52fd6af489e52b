import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { guardServerDir, type ServerDirGuard } from './server-dir.js';

// Real Redis topologies on loopback ports for the failover tests, and for `scripts/redis-topology.ts`
// (a developer trying Sentinel or Cluster by hand): a Cluster of 3 primaries + 3 replicas, and a
// Sentinel set of 1 primary, 1 replica and 3 Sentinels. Debian's `redis-server` plays every part
// (`--cluster-enabled yes`, `--sentinel`); `redis-cli --cluster create` joins the Cluster. Ports are
// free ones picked at run time, files live in a temp dir, and `stop()` SIGKILLs every server and
// removes the dir (test/helpers/server-dir.ts does the same if the test process exits or is killed
// first: each server's pid is in `<port>.pid` there).

const exec = promisify(execFile);
export { freePort };

export interface RedisServerProcess {
  port: number;
  /** Sends SIGKILL (kill -9): no shutdown, no final write, connections reset. */
  kill(): Promise<void>;
  /** Starts it again with the same settings (a Cluster node rejoins with its nodes.conf). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: frozen, it reads nothing, answers nothing, and its sockets stay open. */
  pause(): void;
  resume(): void;
  alive(): boolean;
}

export interface RedisTopology {
  kind: 'cluster' | 'sentinel';
  /** The variables a `rewards-etl` process needs to use this topology (no REDIS_URL). */
  env: Record<string, string>;
  password: string;
  /** The temp dir holding the servers' files (removed by `stop()`). */
  dir: string;
  /** `redis-cli` against one server of the topology, with its password. */
  cli(port: number, ...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface RedisCluster extends RedisTopology {
  kind: 'cluster';
  nodes: RedisServerProcess[];
  /** The node that owns the slot of `key` now (CLUSTER SLOTS as a live node sees it). */
  primaryFor(key: string): Promise<RedisServerProcess>;
  /** Resolves when every slot is served again and `key`'s slot has a primary other than `old`. */
  waitForPromotion(key: string, old: RedisServerProcess, timeoutMs?: number): Promise<RedisServerProcess>;
  /** The replica of `primary`, once it has one whose link is up. */
  syncedReplicaOf(primary: RedisServerProcess, timeoutMs?: number): Promise<RedisServerProcess>;
}

export interface RedisSentinelSet extends RedisTopology {
  kind: 'sentinel';
  primaryName: string;
  data: RedisServerProcess[];
  sentinels: RedisServerProcess[];
  sentinelPassword: string;
  /** The data server the Sentinels currently name as primary. */
  currentPrimary(): Promise<RedisServerProcess>;
  /** Resolves when the Sentinels name a primary other than `old` and it answers as a master. */
  waitForPromotion(old: RedisServerProcess, timeoutMs?: number): Promise<RedisServerProcess>;
  /** The replica of `primary`, once its link is up. */
  syncedReplicaOf(primary: RedisServerProcess, timeoutMs?: number): Promise<RedisServerProcess>;
}

const PASSWORD = 'topology-data-pass-5e1f';
const SENTINEL_PASSWORD = 'topology-sentinel-pass-9c3b';
/** A topology's temp dir: its servers' files and pid files, guarded against outliving this process. */
interface TopologyDir {
  path: string;
  servers: Set<ChildProcess>;
  guard: ServerDirGuard;
}

function topologyDir(prefix: string): TopologyDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  const servers = new Set<ChildProcess>();
  const guard = guardServerDir(path, {
    stopNow: () => {
      for (const child of servers) child.kill('SIGKILL');
    },
    pidFiles: ['*.pid'],
  });
  return { path, servers, guard };
}

async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

async function redisCli(port: number, password: string | undefined, args: string[]): Promise<string> {
  const auth = password === undefined ? [] : ['--no-auth-warning', '-a', password];
  const { stdout } = await exec('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...auth, ...args], {
    timeout: 10_000,
  });
  return stdout.trim();
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${timeoutMs} ms`,
        lastError === undefined ? {} : { cause: lastError },
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One `redis-server` in the foreground (its log goes to a file in `dir`), tracked for SIGKILL. */
function startServer(home: TopologyDir, port: number, args: string[], password: string): RedisServerProcess {
  let child: ChildProcess;
  let exited: Promise<void>;
  const launch = () => {
    const started = spawn('redis-server', args, { cwd: home.path, stdio: 'ignore' });
    home.servers.add(started);
    writeFileSync(join(home.path, `${port}.pid`), `${started.pid ?? ''}\n`);
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    void exited.then(() => home.servers.delete(started));
    child = started;
  };
  launch();
  const server: RedisServerProcess = {
    port,
    alive: () => child.exitCode === null && child.signalCode === null,
    async kill() {
      if (server.alive()) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exited;
    },
    async restart() {
      await server.kill();
      launch();
      await waitForPing(port, password);
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
  };
  return server;
}

function dataServerArgs(dir: string, port: number, password: string, extra: string[] = []): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--requirepass',
    password,
    '--masterauth',
    password,
    '--maxmemory-policy',
    'noeviction',
    // DEBUG (SLEEP, …) for tests that need a server to stall; local connections only.
    '--enable-debug-command',
    'local',
    '--logfile',
    join(dir, `redis-${port}.log`),
    ...extra,
  ];
}

async function waitForPing(port: number, password: string | undefined): Promise<void> {
  await until(`redis on ${port} answers PING`, 10_000, async () =>
    (await redisCli(port, password, ['ping'])) === 'PONG' ? true : undefined,
  );
}

/** 3 primaries, each with one replica; `cluster-node-timeout` 1 s so a dead primary is replaced in seconds. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const home = topologyDir('rewards-etl-cluster-');
  const dir = home.path;
  const ports = await freePorts(12);
  const nodes = ports.slice(0, 6).map((port, i) =>
    startServer(
      home,
      port,
      dataServerArgs(dir, port, PASSWORD, [
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(ports[6 + i]),
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '1000',
        // A replica may always take over, however long ago it last heard its primary.
        '--cluster-replica-validity-factor',
        '0',
      ]),
      PASSWORD,
    ),
  );
  const topology: RedisCluster = {
    kind: 'cluster',
    dir,
    nodes,
    password: PASSWORD,
    env: {
      REDIS_CLUSTER_NODES: nodes
        .slice(0, 3)
        .map((node) => `127.0.0.1:${node.port}`)
        .join(','),
      REDIS_PASSWORD: PASSWORD,
    },
    cli: (port, ...args) => redisCli(port, PASSWORD, args),
    async primaryFor(key) {
      const slot = Number(await redisCli(firstAlive(nodes).port, PASSWORD, ['cluster', 'keyslot', key]));
      const port = await ownerOfSlot(nodes, slot);
      const node = nodes.find((candidate) => candidate.port === port);
      if (node === undefined) throw new Error(`slot ${slot} is owned by ${port}, not one of ours`);
      return node;
    },
    async waitForPromotion(key, old, timeoutMs = 30_000) {
      return until(`a new primary for ${key}`, timeoutMs, async () => {
        for (const node of nodes.filter((candidate) => candidate.alive())) {
          if (!(await redisCli(node.port, PASSWORD, ['cluster', 'info'])).includes('cluster_state:ok'))
            return undefined;
        }
        const next = await topology.primaryFor(key);
        return next === old ? undefined : next;
      });
    },
    syncedReplicaOf: (primary, timeoutMs = 30_000) => syncedReplica(primary, nodes, PASSWORD, timeoutMs),
    stop: () => stopAll(nodes, home),
  };
  try {
    await Promise.all(nodes.map((node) => waitForPing(node.port, PASSWORD)));
    await exec(
      'redis-cli',
      [
        '--no-auth-warning',
        '-a',
        PASSWORD,
        '--cluster',
        'create',
        ...nodes.map((node) => `127.0.0.1:${node.port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    await until('the cluster is ok on every node, each primary with a synced replica', 30_000, async () => {
      for (const node of nodes) {
        if (!(await redisCli(node.port, PASSWORD, ['cluster', 'info'])).includes('cluster_state:ok'))
          return undefined;
      }
      const links = await Promise.all(
        nodes.map((node) => redisCli(node.port, PASSWORD, ['info', 'replication'])),
      );
      const synced = links.filter((info) => info.includes('master_link_status:up')).length;
      return synced === 3 ? true : undefined;
    });
  } catch (error) {
    await topology.stop();
    throw error;
  }
  return topology;
}

function firstAlive(nodes: RedisServerProcess[]): RedisServerProcess {
  const node = nodes.find((candidate) => candidate.alive());
  if (node === undefined) throw new Error('no live node');
  return node;
}

/** The port of the primary serving `slot`, read with CLUSTER SHARDS from a live node. */
async function ownerOfSlot(nodes: RedisServerProcess[], slot: number): Promise<number> {
  const text = await redisCli(firstAlive(nodes).port, PASSWORD, ['--json', 'cluster', 'slots']);
  const ranges = JSON.parse(text) as Array<[number, number, [string, number, string], ...unknown[]]>;
  for (const [start, end, primary] of ranges) if (slot >= start && slot <= end) return primary[1];
  throw new Error(`no primary serves slot ${slot}`);
}

/**
 * A primary and its replica, watched by 3 Sentinels (quorum 2) that call a primary down after 1 s
 * without an answer. The data nodes want REDIS_PASSWORD, the Sentinels REDIS_SENTINEL_PASSWORD.
 */
export async function startRedisSentinelSet(): Promise<RedisSentinelSet> {
  const home = topologyDir('rewards-etl-sentinel-');
  const dir = home.path;
  const primaryName = 'rewards-primary';
  const [primaryPort, replicaPort, ...sentinelPorts] = await freePorts(5);
  const primary = startServer(home, primaryPort!, dataServerArgs(dir, primaryPort!, PASSWORD), PASSWORD);
  const replica = startServer(
    home,
    replicaPort!,
    dataServerArgs(dir, replicaPort!, PASSWORD, ['--replicaof', '127.0.0.1', String(primaryPort)]),
    PASSWORD,
  );
  const data = [primary, replica];
  const sentinels = sentinelPorts.map((port) => {
    const file = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `logfile ${join(dir, `sentinel-${port}.log`)}`,
        `requirepass ${SENTINEL_PASSWORD}`,
        `sentinel monitor ${primaryName} 127.0.0.1 ${primaryPort} 2`,
        `sentinel auth-pass ${primaryName} ${PASSWORD}`,
        // Known from the start instead of from the primary's INFO, which a Sentinel reads every 10 s.
        `sentinel known-replica ${primaryName} 127.0.0.1 ${replicaPort}`,
        `sentinel down-after-milliseconds ${primaryName} 1000`,
        `sentinel failover-timeout ${primaryName} 5000`,
        `sentinel parallel-syncs ${primaryName} 1`,
        '',
      ].join('\n'),
    );
    return startServer(home, port, [file, '--sentinel'], SENTINEL_PASSWORD);
  });
  const sentinelCli = (port: number, args: string[]) => redisCli(port, SENTINEL_PASSWORD, args);
  const primaryPortNow = async (): Promise<number> => {
    const sentinel = sentinels.find((candidate) => candidate.alive()) ?? sentinels[0]!;
    const answer = await sentinelCli(sentinel.port, ['sentinel', 'get-master-addr-by-name', primaryName]);
    return Number(answer.split('\n')[1]);
  };
  const topology: RedisSentinelSet = {
    kind: 'sentinel',
    dir,
    primaryName,
    data,
    sentinels,
    password: PASSWORD,
    sentinelPassword: SENTINEL_PASSWORD,
    env: {
      REDIS_SENTINELS: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(','),
      REDIS_SENTINEL_NAME: primaryName,
      REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
      REDIS_PASSWORD: PASSWORD,
    },
    cli: (port, ...args) =>
      redisCli(port, sentinels.some((s) => s.port === port) ? SENTINEL_PASSWORD : PASSWORD, args),
    async currentPrimary() {
      const port = await primaryPortNow();
      const node = data.find((candidate) => candidate.port === port);
      if (node === undefined) throw new Error(`the Sentinels name ${port}, not one of ours`);
      return node;
    },
    async waitForPromotion(old, timeoutMs = 30_000) {
      return until('the Sentinels to promote a new primary', timeoutMs, async () => {
        const next = await topology.currentPrimary();
        if (next === old) return undefined;
        return (await redisCli(next.port, PASSWORD, ['role'])).startsWith('master') ? next : undefined;
      });
    },
    syncedReplicaOf: (primary, timeoutMs = 30_000) => syncedReplica(primary, data, PASSWORD, timeoutMs),
    stop: () => stopAll([...sentinels, ...data], home),
  };
  try {
    await Promise.all(data.map((node) => waitForPing(node.port, PASSWORD)));
    await Promise.all(sentinels.map((node) => waitForPing(node.port, SENTINEL_PASSWORD)));
    await until(
      'the replica in sync and every Sentinel knowing the others and the replica',
      30_000,
      async () => {
        if (
          !(await redisCli(replica.port, PASSWORD, ['info', 'replication'])).includes('master_link_status:up')
        )
          return undefined;
        for (const sentinel of sentinels) {
          const info = await sentinelCli(sentinel.port, ['info', 'sentinel']);
          if (!/status=ok,address=[^,]+,slaves=1,sentinels=3/.test(info)) return undefined;
        }
        return true;
      },
    );
  } catch (error) {
    await topology.stop();
    throw error;
  }
  return topology;
}

/** The server among `candidates` that replicates `primary` with its link up (INFO replication). */
async function syncedReplica(
  primary: RedisServerProcess,
  candidates: RedisServerProcess[],
  password: string,
  timeoutMs: number,
): Promise<RedisServerProcess> {
  return until(`a synced replica of ${primary.port}`, timeoutMs, async () => {
    for (const node of candidates) {
      if (node === primary || !node.alive()) continue;
      const info = await redisCli(node.port, password, ['info', 'replication']);
      if (info.includes(`master_port:${primary.port}`) && info.includes('master_link_status:up')) return node;
    }
    return undefined;
  });
}

async function stopAll(servers: RedisServerProcess[], home: TopologyDir): Promise<void> {
  await Promise.all(servers.map((server) => server.kill()));
  rmSync(home.path, { recursive: true, force: true });
  home.guard.release();
}
