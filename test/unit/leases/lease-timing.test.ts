import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  acquiredLease,
  leaseTiming,
  NOT_RENEWED,
  REFUSED,
  stepLease,
  type LeaseEvent,
  type LeaseState,
} from '../../../src/leases/lease-timing.js';

const timing = leaseTiming(30_000);

/** Events in time order: renewals sent at some moment and answered, failures, ticks. */
const events = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('renewed' as const), sentAtMs: fc.integer({ min: 0, max: 200_000 }) }),
    fc.record({ kind: fc.constant('failed' as const), atMs: fc.integer({ min: 0, max: 200_000 }) }),
    fc.record({ kind: fc.constant('tick' as const), atMs: fc.integer({ min: 0, max: 200_000 }) }),
    fc.constant({ kind: 'refused' as const }),
  ),
  { maxLength: 30 },
);

function run(list: readonly LeaseEvent[]): LeaseState[] {
  const states = [acquiredLease(0, timing)];
  for (const event of list) states.push(stepLease(states.at(-1)!, event, timing));
  return states;
}

describe('lease timing', () => {
  it('renews every third of the TTL and retries a failed renewal within a second', () => {
    expect(leaseTiming(30_000)).toEqual({ ttlMs: 30_000, renewEveryMs: 10_000, retryEveryMs: 1_000 });
    expect(leaseTiming(3_000)).toMatchObject({ renewEveryMs: 1_000, retryEveryMs: 300 });
    expect(() => leaseTiming(10)).toThrow(/too short/);
  });

  it('the local deadline is never later than the last renewal sent plus the TTL (so never later than Postgres expires it)', () => {
    fc.assert(
      fc.property(events, (list) => {
        let lastSent = 0;
        const states = [acquiredLease(0, timing)];
        for (const event of list) {
          const state = stepLease(states.at(-1)!, event, timing);
          if (event.kind === 'renewed' && state.phase === 'held')
            lastSent = Math.max(lastSent, event.sentAtMs);
          if (state.phase === 'held') expect(state.deadlineMs).toBeLessThanOrEqual(lastSent + timing.ttlMs);
          states.push(state);
        }
      }),
    );
  });

  it('lost is final, and the next renewal is never planned past the deadline', () => {
    fc.assert(
      fc.property(events, (list) => {
        const states = run(list);
        const firstLost = states.findIndex((state) => state.phase === 'lost');
        if (firstLost >= 0)
          expect(states.slice(firstLost).every((state) => state.phase === 'lost')).toBe(true);
        for (const state of states)
          if (state.phase === 'held') expect(state.renewAtMs).toBeLessThanOrEqual(state.deadlineMs);
      }),
    );
  });

  it('a holder whose renewals all come back in time is never lost', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: timing.renewEveryMs }), { maxLength: 50 }), (delays) => {
        let state = acquiredLease(0, timing);
        for (const delay of delays) {
          if (state.phase !== 'held') break;
          // The renewal goes out when planned and comes back `delay` later (less than a TTL).
          const sentAtMs = state.renewAtMs;
          state = stepLease(state, { kind: 'tick', atMs: sentAtMs + delay }, timing);
          state = stepLease(state, { kind: 'renewed', sentAtMs }, timing);
        }
        expect(state.phase).toBe('held');
      }),
    );
  });

  it.each<[string, LeaseEvent[], LeaseState['phase'], string | undefined]>([
    ['a refused renewal (expired or taken) loses it at once', [{ kind: 'refused' }], 'lost', REFUSED],
    [
      'failures before the deadline keep it, retried soon',
      [{ kind: 'failed', atMs: 11_000 }],
      'held',
      undefined,
    ],
    [
      'no renewal before the deadline loses it (Postgres unreachable)',
      [
        { kind: 'failed', atMs: 11_000 },
        { kind: 'tick', atMs: 30_000 },
      ],
      'lost',
      NOT_RENEWED,
    ],
    [
      'a renewal that took longer than the TTL to come back does not save it',
      [
        { kind: 'renewed', sentAtMs: 10_000 },
        { kind: 'tick', atMs: 45_000 },
      ],
      'lost',
      NOT_RENEWED,
    ],
  ])('%s', (_rule, list, phase, reason) => {
    const state = run(list).at(-1)!;
    expect(state.phase).toBe(phase);
    if (state.phase === 'lost') expect(state.reason).toBe(reason);
    if (state.phase === 'held' && list[0]?.kind === 'failed') expect(state.renewAtMs).toBe(12_000);
  });
});
