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
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gate.waiting).toBe(4);
    release();
    await Promise.all([blocker, ...tasks]);
    expect(order).toEqual(['high', 'normal-1', 'normal-2', 'low']);
  });

  it('releases a waiter whose signal aborts at once, and never runs its task', async () => {
    const gate = new PriorityGate();
    let release!: () => void;
    const blocker = gate.run('normal', undefined, () => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    let ran = false;
    const waiting = gate.run('normal', controller.signal, () => Promise.resolve(void (ran = true)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error('shutdown'));
    await expect(waiting).rejects.toThrow('shutdown');
    release();
    await blocker;
    // Its queued turn comes and goes without running the task (and so without claiming a slot).
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toBe(false);
    expect(gate.waiting).toBe(0);
  });
});
