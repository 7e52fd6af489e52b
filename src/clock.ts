/** Where "now" comes from: injected so tests and the simulator can move time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function fixedClock(start: Date): Clock & { set(to: Date): void; advance(ms: number): void } {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    set: (to) => {
      current = to.getTime();
    },
    advance: (ms) => {
      current += ms;
    },
  };
}
