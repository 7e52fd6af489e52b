import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startRedisSentinelSet, type RedisSentinelSet } from '../helpers/redis-topology.js';
import {
  doctorRedisLines,
  HOUR,
  scaleOutThroughFailover,
  lostJobReplanned,
  type ScenarioContext,
} from './lib/failover-scenarios.js';
import { failoverUnderLoad, killRanges, type FailoverTarget } from './lib/failover-under-load.js';
import { chaosSizes } from './lib/scale.js';

// Issues 30 and 38 on a Sentinel set: 1 primary, 1 replica, 3 Sentinels (quorum 2, down after 1 s),
// with a data password and a Sentinel password. Every process finds the primary through the
// Sentinels; the primary is killed -9 again and again while work is in flight.
const FULL = chaosSizes().scale === 'full';
const KILLS = FULL ? 20 : 10;

describe('on Redis Sentinel (1 primary, 1 replica, 3 Sentinels)', () => {
  let set: RedisSentinelSet;
  let sim: RunningSimulator;
  let context: ScenarioContext;
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - 10 * 60_000);

  beforeAll(async () => {
    set = await startRedisSentinelSet();
    // A thin history of its own; each kill's range gets 600 more (failover-under-load.ts).
    const days = Math.ceil((KILLS * 2 + 3 + 20) / 24) + 1;
    sim = await startSimulator({ seed: 3802, checkIns: days * 24 * 20, anchor, days });
    const first = killRanges(anchor, KILLS)[0]!;
    context = {
      sim,
      // The other scenarios' 20 h, before the kills' ranges.
      from: new Date(first.from.getTime() - 20 * HOUR),
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
    // The scale-out run needs its windows busy (about 250 check-ins each, as in issue 30).
    if (FULL) sim.control.checkIns.addLate(5_000, { from: context.from, to: context.to });
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

  // Issue 30's three-worker run through one failover (the shared limit held, no worker left idle):
  // at CHAOS_SCALE=full only, to keep the CI run of this file within a few minutes.
  it.runIf(FULL)(
    'three workers share backfill, look-back, snapshots, intents and alerts, one stops, then the primary is killed -9 mid-backfill: nothing lost or doubled, one alert per intent, the shared limit held, no worker left idle',
    async () => {
      await scaleOutThroughFailover(context);
    },
  );

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
      // 1–3 s before a Sentinel calls the primary down: the promotion then lands anywhere in the
      // clients' reconnect loops (the issue's set promoted in 3.4 s, this one in 2.4 s at 1 s).
      beforeKill: async (random) => {
        const downAfter = 1_000 + Math.round(random() * 2_000);
        for (const sentinel of set.sentinels) {
          await set.cli(
            sentinel.port,
            'sentinel',
            'set',
            set.primaryName,
            'down-after-milliseconds',
            String(downAfter),
          );
        }
        return `down-after-milliseconds ${downAfter}`;
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
