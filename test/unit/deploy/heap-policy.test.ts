import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKER_NODE_OPTIONS } from '../../../src/runtime/heap-policy.js';

// Every shipped launcher starts the worker with the one heap policy (src/runtime/heap-policy.ts),
// and node takes it from NODE_OPTIONS (it refuses some V8 flags there, e.g. --heap-growing-percent).

const ROOT = new URL('../../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the heap policy', () => {
  it("is the image's NODE_OPTIONS", () => {
    const value = /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(read('Dockerfile'))?.[1];
    expect(value).toBe(WORKER_NODE_OPTIONS);
  });

  it("is the systemd unit's NODE_OPTIONS", () => {
    const unit = read('deploy/systemd/rewards-etl-worker.service');
    const value = /^Environment="NODE_OPTIONS=([^"]*)"$/m.exec(unit)?.[1];
    expect(value).toBe(WORKER_NODE_OPTIONS);
  });

  it("is on npm start's command line", () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(scripts['start']).toBe(`node ${WORKER_NODE_OPTIONS} dist/src/cli/main.js worker`);
  });

  it('is accepted in NODE_OPTIONS and sets the heap limit it names', () => {
    const probe = spawnSync(
      process.execPath,
      ['-e', 'process.stdout.write(String(require("node:v8").getHeapStatistics().heap_size_limit))'],
      { env: { ...process.env, NODE_OPTIONS: WORKER_NODE_OPTIONS }, encoding: 'utf8' },
    );
    expect(probe.stderr).toBe('');
    expect(probe.status).toBe(0);
    const limitMiB = Number(probe.stdout) / 1024 / 1024;
    // The old generation's 1,024 MiB plus the young generation's share.
    expect(limitMiB).toBeGreaterThanOrEqual(1024);
    expect(limitMiB).toBeLessThan(1100);
  });
});
