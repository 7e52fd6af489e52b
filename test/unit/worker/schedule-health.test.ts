import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scheduleHealth, stallGraceMs } from '../../../src/worker/schedule-health.js';

const NOW = 1_800_000_000_000;

describe('scheduleHealth', () => {
  it('a scheduler Redis no longer has is missing', () => {
    expect(scheduleHealth({ next: undefined, nextJobState: 'unknown', everyMs: 5_000, now: NOW })).toBe(
      'missing',
    );
  });

  it('a next job that is gone long after its time is a stalled chain', () => {
    expect(scheduleHealth({ next: NOW - 60_000, nextJobState: 'unknown', everyMs: 5_000, now: NOW })).toBe(
      'stalled',
    );
  });

  it('a next job finished (or taken) without a later iteration is a stalled chain', () => {
    for (const state of ['completed', 'failed', 'active']) {
      expect(scheduleHealth({ next: NOW - 60_000, nextJobState: state, everyMs: 5_000, now: NOW })).toBe(
        'stalled',
      );
    }
  });

  it('a next job just taken by a worker is left alone within the grace', () => {
    expect(scheduleHealth({ next: NOW - 1_000, nextJobState: 'active', everyMs: 5_000, now: NOW })).toBe(
      'ok',
    );
    expect(scheduleHealth({ next: NOW - 1_000, nextJobState: 'unknown', everyMs: 5_000, now: NOW })).toBe(
      'ok',
    );
  });

  it('a waiting or delayed next job holds the chain however late (a backlog, a skewed clock)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('waiting', 'delayed', 'prioritized', 'waiting-children'),
        fc.integer({ min: -86_400_000, max: 86_400_000 }),
        fc.integer({ min: 1_000, max: 3_600_000 }),
        (state, lateness, everyMs) =>
          scheduleHealth({ next: NOW - lateness, nextJobState: state, everyMs, now: NOW }) === 'ok',
      ),
    );
  });

  it('the grace is two periods, never under 10 s', () => {
    expect(stallGraceMs(1_000)).toBe(10_000);
    expect(stallGraceMs(900_000)).toBe(1_800_000);
  });
});
