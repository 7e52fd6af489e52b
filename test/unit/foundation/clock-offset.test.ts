import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeOffset, offsetOf } from '../../../src/clock-offset.js';

describe("the offset clock's arithmetic", () => {
  it('the true offset lies within the estimate ± its error, whatever the delays each way', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -3_600_000, max: 3_600_000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 500 })), {
          minLength: 1,
          maxLength: 5,
        }),
        (trueOffsetMs, delays) => {
          let hostMs = 1_800_000_000_000;
          const samples = delays.map(([there, back]) => {
            const sentAtMs = hostMs;
            const serverMs = sentAtMs + there + trueOffsetMs;
            const receivedAtMs = sentAtMs + there + back;
            hostMs = receivedAtMs + 10;
            return { sentAtMs, serverMs, receivedAtMs };
          });
          const offset = offsetOf(samples)!;
          expect(Math.abs(offset.offsetMs - trueOffsetMs)).toBeLessThanOrEqual(offset.errorMs + 1e-6);
          // The tightest sample is used.
          const shortest = Math.min(...delays.map(([there, back]) => there + back));
          expect(offset.errorMs).toBe(shortest / 2);
        },
      ),
    );
  });

  it('no usable sample, no offset: a clock that ran backwards during a round trip is ignored', () => {
    expect(offsetOf([])).toBeNull();
    expect(offsetOf([{ sentAtMs: 10, serverMs: 5, receivedAtMs: 9 }])).toBeNull();
    expect(offsetOf([{ sentAtMs: 0, serverMs: Number.NaN, receivedAtMs: 2 }])).toBeNull();
  });

  it('says which way and how far, to the millisecond under a second', () => {
    expect(describeOffset({ offsetMs: 300_250, errorMs: 0.4 }, 'Postgres')).toBe(
      'this host is 300.3 s behind Postgres (±1 ms)',
    );
    expect(describeOffset({ offsetMs: -12.4, errorMs: 2 }, 'Redis')).toBe(
      'this host is 12 ms ahead of Redis (±2 ms)',
    );
  });
});
