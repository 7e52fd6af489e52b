import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startRedisSentinelSet, type RedisSentinelSet } from '../helpers/redis-topology.js';
import {
  doctorRedisLines,
  HOUR,
  lostJobReplanned,
  scaleOutThroughFailover,
  type ScenarioContext,
} from './lib/failover-scenarios.js';

// Issue 30 on a Sentinel set: 1 primary, 1 replica, 3 Sentinels (quorum 2, down after 1 s), with a
// data password and a Sentinel password. The workers find the primary through the Sentinels.
describe('on Redis Sentinel (1 primary, 1 replica, 3 Sentinels)', () => {
  let set: RedisSentinelSet;
  let sim: RunningSimulator;
  let context: ScenarioContext;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);

  beforeAll(async () => {
    set = await startRedisSentinelSet();
    sim = await startSimulator({ seed: 3002, checkIns: 8_000, anchor, days: 1 });
    context = {
      sim,
      from: new Date(Math.floor(anchor.getTime() / HOUR) * HOUR - 23 * HOUR),
      // Ends 3 h before the simulator's now: no visit of the range is still ongoing.
      to: new Date(Math.floor(anchor.getTime() / HOUR) * HOUR - 3 * HOUR),
      label: 'sentinel',
      target: {
        kind: 'sentinel',
        env: set.env,
        primaryFor: () => set.currentPrimary(),
        waitForPromotion: (_prefix, old) => set.waitForPromotion(old),
        syncedReplicaOf: (primary) => set.syncedReplicaOf(primary),
        cli: (port, ...args) => set.cli(port, ...args),
      },
    };
  });

  afterAll(async () => {
    await sim?.close();
    await set?.stop();
  });

  it('doctor names the mode and the primary the Sentinels gave, and sees its replica', async () => {
    const [redis, eviction, failover] = await doctorRedisLines(context);
    expect(redis).toMatchObject({ check: 'redis', status: 'ok' });
    expect(redis!.detail).toMatch(
      /^sentinel "rewards-primary" via .*: reachable, primary 127\.0\.0\.1:\d+, Redis 7/,
    );
    expect(eviction).toMatchObject({ status: 'ok', detail: 'maxmemory-policy noeviction' });
    expect(failover!.detail).not.toContain('no replica');
    expect(failover).toMatchObject({ status: 'warn', detail: expect.stringContaining('no AOF') });
  });

  // On the Sentinel set only: the Cluster's failover loses unreplicated writes the same way.
  it('window jobs lost with unreplicated writes are re-planned from sync_windows', async () => {
    await lostJobReplanned(context);
  });

  it('three workers share backfill, look-back, snapshots, intents and alerts, one stops, then the primary is killed -9 mid-backfill: nothing lost or doubled, one alert per intent, the shared limit held, no worker left idle', async () => {
    await scaleOutThroughFailover(context, { restore: false });
  });
});
