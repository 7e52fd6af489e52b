import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { testRedisPrefix } from '../helpers/redis.js';
import {
  CHAOS_ENCRYPTION_KEY,
  CHAOS_WEBHOOK_SECRET,
  chaosEnv,
  secretsOf,
  sleep,
  startWebhookReceiver,
  waitFor,
  type WebhookReceiver,
} from './lib/chaos-env.js';
import { isAlive, runCli, startCli, stopCli, type CliProcess } from './lib/cli-process.js';
import { findSecretsInFiles } from './lib/log-scan.js';
import { chaosSeed, seededRandom } from './lib/prng.js';
import { recordChaosResult } from './lib/results.js';
import { chaosSizes } from './lib/scale.js';
import { allWindowsComplete, tallyCheckIns, windowStatuses } from './lib/warehouse-checks.js';

const sizes = chaosSizes();
const HOUR = 3_600_000;
const DAYS = sizes.scale === 'full' ? 5 : 2;

// Issue 9, scenario 1: SIGKILL random workers during a backfill while payment intents are paid.
// What must hold afterwards: verify exits 0, no duplicate and no gap in check_ins, exactly one alert
// row per intent paid while we watched, and the receiver saw every alert id (at least once).
describe(`kill -9 during a backfill (${sizes.scale})`, () => {
  let sim: RunningSimulator;
  let database: TestDatabase;
  let harness: PipelineHarness;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  const processes: CliProcess[] = [];
  const anchor = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);
  const from = new Date(anchor.getTime() - DAYS * 24 * HOUR);

  beforeAll(async () => {
    sim = await startSimulator({ seed: 9001, checkIns: sizes.killCheckIns, anchor, days: DAYS });
    database = await createTestDatabase('chaos_kill9');
    receiver = await startWebhookReceiver();
    env = chaosEnv({
      sim,
      databaseUrl: database.url,
      redisPrefix: testRedisPrefix('chaos-kill9'),
      startAt: from,
      window: '1h',
      webhookUrl: receiver.url,
      webhookSecret: CHAOS_WEBHOOK_SECRET,
      encryptionKey: CHAOS_ENCRYPTION_KEY,
      rps: sizes.workerRps,
    });
    harness = createPipelineHarness({ sim, db: database.db, label: 'chaos-kill9-probe' });
  });

  afterAll(async () => {
    await Promise.all(processes.filter(isAlive).map((proc) => stopCli(proc, 5_000)));
    await harness?.close();
    await receiver?.close();
    await sim?.close();
    await database?.drop();
  });

  it('loses nothing, duplicates nothing, alerts every paid intent', async () => {
    const seed = chaosSeed();
    const random = seededRandom(seed);
    console.log(`[chaos] kill-9 seed ${seed} (replay with CHAOS_SEED=${seed})`);
    let started = 0;
    const startWorker = (slot: number) => {
      const proc = startCli(`kill9-worker${slot}-${started++}`, ['worker', '--shutdown-deadline', '5'], env);
      processes.push(proc);
      return proc;
    };
    const slots = [startWorker(0), startWorker(1)];

    const backfill = await runCli(
      'kill9-backfill',
      ['backfill', '--from', from.toISOString(), '--to', anchor.toISOString()],
      env,
    );
    expect(backfill.code, backfill.stderr).toBe(0);

    // Intents: created, then paid only once the pipeline has recorded them as open ("paid after watching").
    const paidIntents: string[] = [];
    let intentsDone = false;
    const intentsLoop = (async () => {
      for (let i = 0; i < sizes.intents; i++) {
        const intent = sim.control.intents.create({ description: `chaos ${i}` });
        const seen = await waitFor(
          async () => {
            const row = await database.db
              .selectFrom('rewards.payment_intents')
              .select('id')
              .where('id', '=', intent.id)
              .executeTakeFirst();
            return row !== undefined;
          },
          120_000,
          500,
        );
        if (!seen) throw new Error(`intent ${intent.id} was never recorded as open`);
        sim.control.intents.pay(intent.id);
        paidIntents.push(intent.id);
        await sleep(500 + random() * 1_500);
      }
      intentsDone = true;
    })();

    let kills = 0;
    let killsDuringBackfill = 0;
    const deadline = Date.now() + sizes.settleMs;
    while (kills < sizes.minKills || !intentsDone) {
      if (Date.now() > deadline) break;
      await sleep(1_000 + random() * 2_500);
      const slot = random() < 0.5 ? 0 : 1;
      const victim = slots[slot]!;
      if (!isAlive(victim)) continue;
      victim.child.kill('SIGKILL');
      await victim.exited;
      kills++;
      if (!(await allWindowsComplete(database.db, from, anchor))) killsDuringBackfill++;
      slots[slot] = startWorker(slot);
      if (kills >= sizes.minKills * 3) break;
    }
    await intentsLoop;

    // Killed jobs come back once their BullMQ lock expires (lockDuration 60 s, stall check every 30 s).
    const complete = await waitFor(
      () => allWindowsComplete(database.db, from, anchor),
      sizes.settleMs,
      2_000,
    );
    expect(complete, JSON.stringify(await windowStatuses(database.db))).toBe(true);

    const alertsFlowed = await waitFor(
      async () => {
        const rows = await database.db.selectFrom('rewards.alerts').select(['id', 'delivered_at']).execute();
        return rows.length >= paidIntents.length && rows.every((row) => receiver.received.includes(row.id));
      },
      120_000,
      1_000,
    );

    const verify = await runCli(
      'kill9-verify',
      ['verify', '--from', from.toISOString(), '--to', anchor.toISOString()],
      env,
    );
    const tally = await tallyCheckIns(database.db, from, anchor);
    const apiTotal = await harness.deps.api.countCheckIns({ createdAfter: from, createdBefore: anchor });
    const alerts = await database.db
      .selectFrom('rewards.alerts')
      .select(['id', 'payment_intent_id'])
      .execute();
    const alertsPerIntent = paidIntents.map(
      (id) => alerts.filter((alert) => alert.payment_intent_id === id).length,
    );
    const redeliveries = receiver.received.length - new Set(receiver.received).size;

    await Promise.all(slots.map((proc) => stopCli(proc)));
    const secretHits = findSecretsInFiles(
      processes.map((proc) => proc.logPath),
      secretsOf(env),
    );

    recordChaosResult('kill-9', {
      seed,
      kills,
      killsDuringBackfill,
      workerStarts: started,
      apiTotal,
      warehouseRows: tally.rows,
      rowsLost: apiTotal - tally.distinct,
      duplicates: tally.rows - tally.distinct,
      intentsPaid: paidIntents.length,
      alertRows: alerts.length,
      webhookPosts: receiver.received.length,
      webhookRedeliveries: redeliveries,
      verifyExit: verify.code,
      secretHits: secretHits.length,
    });

    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(kills).toBeGreaterThanOrEqual(sizes.minKills);
    expect(tally.rows).toBe(tally.distinct);
    expect(tally.distinct).toBe(apiTotal);
    expect(apiTotal).toBe(sizes.killCheckIns);
    expect(
      alertsPerIntent.every((n) => n === 1),
      JSON.stringify(alertsPerIntent),
    ).toBe(true);
    expect(alertsFlowed, `received ${receiver.received.length} of ${alerts.length} alerts`).toBe(true);
    expect(secretHits).toEqual([]);
  });
});
