import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-topology.js';
import {
  doctorRedisLines,
  HOUR,
  scaleOutThroughFailover,
  type ScenarioContext,
} from './lib/failover-scenarios.js';
import { failoverUnderLoad, killRanges, type FailoverTarget } from './lib/failover-under-load.js';
import { chaosSizes } from './lib/scale.js';

// Issues 30 and 38 on a Redis Cluster of 3 primaries and 3 replicas (loopback ports,
// cluster-node-timeout 1 s). Every key of a run carries the prefix's hash tag, so all of them live
// in one slot: the primary killed each time is the one owning that slot.
const FULL = chaosSizes().scale === 'full';
const KILLS = FULL ? 20 : 10;

describe('on a Redis Cluster (3 primaries, 3 replicas)', () => {
  let cluster: RedisCluster;
  let sim: RunningSimulator;
  let context: ScenarioContext;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);

  beforeAll(async () => {
    cluster = await startRedisCluster();
    // A thin history of its own; each kill's range gets 600 more (failover-under-load.ts).
    const days = Math.ceil((KILLS * 2 + 3 + 20) / 24) + 1;
    sim = await startSimulator({ seed: 3801, checkIns: days * 24 * 20, anchor, days });
    const first = killRanges(anchor, KILLS)[0]!;
    context = {
      sim,
      // The other scenarios' 20 h, before the kills' ranges.
      from: new Date(first.from.getTime() - 20 * HOUR),
      to: first.from,
      label: 'cluster',
      target: {
        kind: 'cluster',
        env: cluster.env,
        primaryFor: (prefix) => cluster.primaryFor(`${prefix}:probe`),
        waitForPromotion: (prefix, old) => cluster.waitForPromotion(`${prefix}:probe`, old),
        syncedReplicaOf: (primary) => cluster.syncedReplicaOf(primary),
        cli: (port, ...args) => cluster.cli(port, ...args),
      },
    };
    // The scale-out run needs its windows busy (about 250 check-ins each, as in issue 30).
    if (FULL) sim.control.checkIns.addLate(5_000, { from: context.from, to: context.to });
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

  // Issue 30's three-worker run through one failover (the shared limit held, no worker left idle):
  // at CHAOS_SCALE=full only, to keep the CI run of this file within a few minutes.
  it.runIf(FULL)(
    'three workers share backfill, look-back, snapshots, intents and alerts, one stops, then the primary is killed -9 mid-backfill: nothing lost or doubled, one alert per intent, the shared limit held, no worker left idle',
    async () => {
      await scaleOutThroughFailover(context);
    },
  );

  it(`the primary owning the hash slot killed -9 ${KILLS} times at random moments while a backfill pages, alerts are paid and a worker blocks: each time served again within 30 s of the promotion, nothing lost or doubled, verify 0, each alert POSTed once, /readyz 200`, async () => {
    const target: FailoverTarget = {
      kind: 'cluster',
      env: cluster.env,
      primaryFor: (prefix) => cluster.primaryFor(`${prefix}:probe`),
      waitForPromotion: (prefix, old) => cluster.waitForPromotion(`${prefix}:probe`, old),
      rejoined: async (_old, promoted) => {
        await cluster.syncedReplicaOf(promoted);
      },
    };
    const records = await failoverUnderLoad({ label: 'cluster', target, sim, anchor, kills: KILLS });
    expect(records).toHaveLength(KILLS);
  });
});
