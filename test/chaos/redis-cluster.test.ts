import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-topology.js';
import {
  doctorRedisLines,
  HOUR,
  scaleOutThroughFailover,
  type ScenarioContext,
} from './lib/failover-scenarios.js';

// Issue 30 on a Redis Cluster of 3 primaries and 3 replicas (loopback ports, cluster-node-timeout
// 1 s). Every key of a run carries the prefix's hash tag, so all of them live in one slot: the
// primary killed is the one owning that slot.
describe('on a Redis Cluster (3 primaries, 3 replicas)', () => {
  let cluster: RedisCluster;
  let sim: RunningSimulator;
  let context: ScenarioContext;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);

  beforeAll(async () => {
    cluster = await startRedisCluster();
    sim = await startSimulator({ seed: 3001, checkIns: 8_000, anchor, days: 1 });
    context = {
      sim,
      from: new Date(Math.floor(anchor.getTime() / HOUR) * HOUR - 23 * HOUR),
      // Ends 3 h before the simulator's now: no visit of the range is still ongoing.
      to: new Date(Math.floor(anchor.getTime() / HOUR) * HOUR - 3 * HOUR),
      label: 'cluster',
      target: {
        kind: 'cluster',
        env: cluster.env,
        // CLUSTER KEYSLOT of a key under the prefix: the slot every key of the run hashes to.
        primaryFor: (prefix) => cluster.primaryFor(`${prefix}:probe`),
        waitForPromotion: (prefix, old) => cluster.waitForPromotion(`${prefix}:probe`, old),
        syncedReplicaOf: (primary) => cluster.syncedReplicaOf(primary),
        cli: (port, ...args) => cluster.cli(port, ...args),
      },
    };
  });

  afterAll(async () => {
    await sim?.close();
    await cluster?.stop();
  });

  it('doctor names the mode, checks maxmemory-policy on each of the 3 primaries, and sees their replicas', async () => {
    const [redis, eviction, failover] = await doctorRedisLines(context);
    expect(redis).toMatchObject({ check: 'redis', status: 'ok' });
    expect(redis!.detail).toMatch(
      /^cluster via .*: reachable, 3 primaries \(127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+\), Redis 7/,
    );
    expect(eviction).toMatchObject({
      status: 'ok',
      detail: 'maxmemory-policy noeviction on all 3 primaries',
    });
    // Every primary has its replica; the test servers run without AOF, which is warned about.
    expect(failover!.detail).not.toContain('no replica');
    expect(failover).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('no AOF (appendonly no) on 127.0.0.1:'),
    });
  });

  it('three workers share backfill, look-back, snapshots, intents and alerts, one stops, then the primary owning the hash slot is killed -9 mid-backfill: nothing lost or doubled, one alert per intent, the shared limit held, no worker left idle', async () => {
    await scaleOutThroughFailover(context, { restore: false });
  });
});
