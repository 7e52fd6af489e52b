export interface ClockSource {
  now(): Date;
}

/** The simulator's own time: real time by default, settable and advanceable for tests and demos. */
export interface SimulatorClock extends ClockSource {
  nowMs(): number;
  set(at: Date): void;
  advance(ms: number): void;
  /** Stops the clock at its current reading; set/advance still move it. */
  freeze(): void;
  unfreeze(): void;
  isFrozen(): boolean;
}

export const realClock: ClockSource = { now: () => new Date() };

export function createSimulatorClock(source: ClockSource = realClock): SimulatorClock {
  let offsetMs = 0;
  let frozenAtMs: number | null = null;
  const nowMs = (): number => frozenAtMs ?? source.now().getTime() + offsetMs;
  return {
    nowMs,
    now: () => new Date(nowMs()),
    set: (at) => {
      if (frozenAtMs !== null) frozenAtMs = at.getTime();
      else offsetMs = at.getTime() - source.now().getTime();
    },
    advance: (ms) => {
      if (frozenAtMs !== null) frozenAtMs += ms;
      else offsetMs += ms;
    },
    freeze: () => {
      frozenAtMs = nowMs();
    },
    unfreeze: () => {
      if (frozenAtMs === null) return;
      offsetMs = frozenAtMs - source.now().getTime();
      frozenAtMs = null;
    },
    isFrozen: () => frozenAtMs !== null,
  };
}
