import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { ANCHOR, call } from './sim-fixture.js';

const N = 1_000_000;
const MB = 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const retained = (): number => {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};

let sim: RunningSimulator;
let memoryDelta = 0;
beforeAll(async () => {
  const before = retained();
  sim = await startSimulator({
    seed: 3,
    anchor: ANCHOR,
    checkIns: N,
    days: 30,
    clock: { now: () => ANCHOR },
  });
  memoryDelta = retained() - before;
}, 120_000);
afterAll(() => sim.close());

test('scale: 1,000,000 check-ins are held in well under 1 GB (heap + array buffers)', () => {
  expect(sim.control.checkIns.count()).toBe(N);
  expect(memoryDelta).toBeLessThan(300 * MB);
  expect(sim.control.stats.checkInStoreBytes()).toBeLessThan(100 * MB);
});

/** Two binary searches (ceil(log2 n) + 1 probes each) plus the rows of the page. */
const bound = (pageSize: number): number => pageSize + 2 * (Math.ceil(Math.log2(N)) + 1);

test('scale: per-request work is ~page_size + log n rows, not n, for every filter shape', async () => {
  const key = sim.credentials.apiKey;
  const first = (await call(sim, '/check_ins?page_size=1', { apiKey: key })).json.check_ins[0];
  const queries = [
    '?page_size=100',
    '?page_size=500&page=1500',
    '?created_after=2025-02-10T00:00:00Z&created_before=2025-02-11T00:00:00Z&page_size=200&page=3',
    `?restaurant=${first.location.restaurant.id}&page_size=100&page=20`,
    `?location=${first.location.id}&created_after=2025-02-15T00:00:00Z&page_size=50`,
  ];
  for (const query of queries) {
    const res = await call(sim, `/check_ins${query}`, { apiKey: key });
    expect(res.status).toBe(200);
    const stats = sim.control.stats.lastQuery()!;
    expect(stats.storeSize).toBe(N);
    expect(stats.rowsReturned).toBe(res.json.check_ins.length);
    expect(stats.rowsExamined).toBeLessThanOrEqual(bound(res.json.pagination.page_size));
    expect(stats.rowsExamined).toBeLessThan(N / 1000);
  }
  expect((await call(sim, '/check_ins?page_size=1', { apiKey: key })).json.pagination.total_count).toBe(N);
});

test('scale: /check_ins/{id} finds a deep row by decoding its id', async () => {
  const key = sim.credentials.apiKey;
  const deep = (await call(sim, '/check_ins?page_size=1&page=987654', { apiKey: key })).json.check_ins[0];
  const res = await call(sim, `/check_ins/${deep.id}`, { apiKey: key });
  expect(res.status).toBe(200);
  expect(res.json.created_at).toBe(deep.created_at);
});
