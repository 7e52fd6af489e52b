import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startRedisSentinelSet, type RedisSentinelSet } from '../helpers/redis-topology.js';
import { doctorRedisLines, HOUR, lostJobReplanned, type ScenarioContext } from './lib/failover-scenarios.js';
import { failoverUnderLoad, killRanges, type FailoverTarget } from './lib/failover-under-load.js';
import { chaosSizes } from './lib/scale.js';

// Issues 30 and 38 on a Sentinel set: 1 primary, 1 replica, 3 Sentinels (quorum 2, down after 1 s),
// with a data password and a Sentinel password. Every process finds the primary through the
// Sentinels; the primary is killed -9 again and again while work is in flight.
const KILLS = chaosSizes().scale === 'full' ? 20 : 10;

describe('on Redis Sentinel (1 primary, 1 replica, 3 Sentinels)', () => {
  let set: RedisSentinelSet;
  let sim: RunningSimulator;
  let context: ScenarioContext;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);

  beforeAll(async () => {
    set = await startRedisSentinelSet();
    // A thin history of its own; each kill's range gets 600 more (failover-under-load.ts).
    const days = Math.ceil((KILLS * 2 + 4) / 24);
    sim = await startSimulator({ seed: 3802, checkIns: days * 24 * 20, anchor, days });
    const first = killRanges(anchor, KILLS)[0]!;
    context = {
      sim,
      from: new Date(first.from.getTime() - 4 * HOUR),
      to: first.from,
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

  it('window jobs lost with unreplicated writes are re-planned from sync_windows', async () => {
    await lostJobReplanned(context);
  });

  it(`the primary killed -9 ${KILLS} times at random moments while a backfill pages, alerts are paid and a worker blocks: each time served again within 30 s of the promotion, nothing lost or doubled, verify 0, each alert POSTed once, /readyz 200`, async () => {
    const target: FailoverTarget = {
      kind: 'sentinel',
      env: set.env,
      primaryFor: () => set.currentPrimary(),
      waitForPromotion: (_prefix, old) => set.waitForPromotion(old),
      rejoined: async (old, promoted) => {
        await set.syncedReplicaOf(promoted);
        await sentinelsKnowReplica(set, old.port);
      },
    };
    const records = await failoverUnderLoad({ label: 'sentinel', target, sim, anchor, kills: KILLS });
    expect(records).toHaveLength(KILLS);
  });
});

/** Every Sentinel lists `port` as a replica in good standing (so it can be promoted next time). */
async function sentinelsKnowReplica(set: RedisSentinelSet, port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answers = await Promise.all(
      set.sentinels.map((sentinel) => set.cli(sentinel.port, 'sentinel', 'replicas', set.primaryName)),
    );
    const good = answers.every((text) => {
      const lines = text.split('\n');
      const at = lines.findIndex((line, i) => line === 'port' && lines[i + 1] === String(port));
      if (at < 0) return false;
      const flags = lines.findIndex((line, i) => i > at && line === 'flags');
      return flags > 0 && lines[flags + 1] === 'slave';
    });
    if (good) return;
    if (Date.now() > deadline) throw new Error(`the Sentinels do not list ${port} as a good replica`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
