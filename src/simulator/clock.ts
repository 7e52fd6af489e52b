export interface ClockSource {
  now(): Date;
}

/**
 * The simulator's own time: real time by default, settable and advanceable for tests and demos, and
 * able to run faster than its source (a time scale of 1440 runs a simulated day in a real minute).
 */
export interface SimulatorClock extends ClockSource {
  nowMs(): number;
  set(at: Date): void;
  advance(ms: number): void;
  /** Stops the clock at its current reading; set/advance still move it. */
  freeze(): void;
  unfreeze(): void;
  isFrozen(): boolean;
  /** Simulated milliseconds per millisecond of the source; the reading stays continuous when it changes. */
  setTimeScale(scale: number): void;
  timeScale(): number;
}

export const realClock: ClockSource = { now: () => new Date() };

export function checkTimeScale(scale: number): number {
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1_000_000)
    throw new RangeError(`time scale must be a number above 0 and at most 1000000, got ${scale}`);
  return scale;
}

export function createSimulatorClock(source: ClockSource = realClock, timeScale = 1): SimulatorClock {
  let scale = checkTimeScale(timeScale);
  // Reading = baseMs + (source − sourceBaseMs) × scale; with scale 1 that is the source plus an offset.
  let sourceBaseMs = source.now().getTime();
  let baseMs = sourceBaseMs;
  let frozenAtMs: number | null = null;
  const running = (): number => baseMs + Math.floor((source.now().getTime() - sourceBaseMs) * scale);
  const nowMs = (): number => frozenAtMs ?? running();
  const rebase = (atMs: number): void => {
    sourceBaseMs = source.now().getTime();
    baseMs = atMs;
  };
  return {
    nowMs,
    now: () => new Date(nowMs()),
    set: (at) => {
      if (frozenAtMs !== null) frozenAtMs = at.getTime();
      else rebase(at.getTime());
    },
    advance: (ms) => {
      if (frozenAtMs !== null) frozenAtMs += ms;
      else baseMs += ms;
    },
    freeze: () => {
      frozenAtMs = nowMs();
    },
    unfreeze: () => {
      if (frozenAtMs === null) return;
      rebase(frozenAtMs);
      frozenAtMs = null;
    },
    isFrozen: () => frozenAtMs !== null,
    setTimeScale: (next) => {
      checkTimeScale(next);
      if (frozenAtMs === null) rebase(running());
      scale = next;
    },
    timeScale: () => scale,
  };
}
