import { describe, expect, it } from 'vitest';
import { PriorityGate } from '../../../src/api/priority-gate.js';

describe('PriorityGate', () => {
  it('runs one task at a time, high priority first, FIFO within a priority', async () => {
    const gate = new PriorityGate();
    const order: string[] = [];
    let release!: () => void;
    const blocker = gate.run('normal', undefined, () => new Promise<void>((resolve) => (release = resolve)));
    const tasks = [
      gate.run('low', undefined, () => Promise.resolve(void order.push('low'))),
      gate.run('normal', undefined, () => Promise.resolve(void order.push('normal-1'))),
      gate.run('high', undefined, () => Promise.resolve(void order.push('high'))),
      gate.run('normal', undefined, () => Promise.resolve(void order.push('normal-2'))),
    ];
    // Queued as soon as run() returns: no wait, so the order cannot depend on timers or load.
    expect(gate.waiting).toBe(4);
    release();
    await Promise.all([blocker, ...tasks]);
    expect(order).toEqual(['high', 'normal-1', 'normal-2', 'low']);
  });

  it('ranks a caller that arrives in the same tick as the running task finishes', async () => {
    const gate = new PriorityGate();
    const order: string[] = [];
    let release!: () => void;
    const blocker = gate.run('normal', undefined, () => new Promise<void>((resolve) => (release = resolve)));
    const normal = gate.run('normal', undefined, () => Promise.resolve(void order.push('normal')));
    release();
    const high = gate.run('high', undefined, () => Promise.resolve(void order.push('high')));
    await Promise.all([blocker, normal, high]);
    expect(order).toEqual(['high', 'normal']);
  });

  it('releases a waiter whose signal aborts at once, and never runs its task', async () => {
    const gate = new PriorityGate();
    let release!: () => void;
    const blocker = gate.run('normal', undefined, () => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    let ran = false;
    const waiting = gate.run('normal', controller.signal, () => Promise.resolve(void (ran = true)));
    expect(gate.waiting).toBe(1);
    controller.abort(new Error('shutdown'));
    await expect(waiting).rejects.toThrow('shutdown');
    expect(gate.waiting).toBe(0);
    release();
    await blocker;
    await gate.run('low', undefined, () => Promise.resolve());
    expect(ran).toBe(false);
  });

  it('refuses a caller whose signal has already aborted', async () => {
    const gate = new PriorityGate();
    await expect(
      gate.run('high', AbortSignal.abort(new Error('gone')), () => Promise.resolve(1)),
    ).rejects.toThrow('gone');
  });
});
