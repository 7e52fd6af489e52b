import type { ChangeModel } from './changes/change-model.js';
import type { SimContext } from './context.js';
import { utcOffsetMinutes, visitIntensity } from './data/rhythm.js';
import { createPrng } from './prng.js';
import { addCheckIn, endOngoingVisits } from './world-ops.js';

/** At most this many arrivals per tick, so a clock jump of months does not stall the server. */
const MAX_ARRIVALS_PER_TICK = 100_000;

export interface LiveMode {
  /** Catches up to the clock: new arrivals since the last tick, and visits whose length elapsed end. */
  tick(): { arrived: number; ended: number };
  start(intervalMs: number): void;
  stop(): void;
}

/**
 * Without the change model: arrivals sampled per tick. With it, the model's feed process owns
 * arrivals and ends, and a tick only applies what is due (plus ends check-ins added by the control).
 */
export function createLiveMode(ctx: SimContext, checkInsPerDay: number, model: ChangeModel | null): LiveMode {
  const { world, clock } = ctx;
  const rng = createPrng(world.seed, 'live');
  const offsets = world.locations.map((l) => utcOffsetMinutes(l.timeZone, world.anchorMs));
  // Mean of visitIntensity over a day is about 0.45; normalise so the daily total matches the history.
  const perMinute = Math.max(0.5, checkInsPerDay / 1440) / 0.45;
  let lastMs = clock.nowMs();
  let timer: NodeJS.Timeout | null = null;

  const modelTick = (model: ChangeModel): { arrived: number; ended: number } => {
    const before = model.counters();
    const now = clock.nowMs();
    world.timeline.runUntil(now);
    const manual = endOngoingVisits(world, now, true);
    const after = model.counters();
    return {
      arrived: after.feedArrived - before.feedArrived,
      ended: after.feedEnded - before.feedEnded + manual,
    };
  };

  const tick = (): { arrived: number; ended: number } => {
    if (model) return modelTick(model);
    const now = clock.nowMs();
    if (now <= lastMs) {
      lastMs = Math.min(lastMs, now);
      return { arrived: 0, ended: 0 };
    }
    const minutes = (now - lastMs) / 60_000;
    const sample = world.locations[0];
    const localHour = sample ? ((((now / 60_000 + (offsets[0] ?? 0)) % 1440) + 1440) % 1440) / 60 : 12;
    const expected = perMinute * minutes * visitIntensity(localHour, world.rhythm);
    const count = Math.min(MAX_ARRIVALS_PER_TICK, Math.floor(expected + rng.next()));
    const live = world.locations.filter((l) => !l.removed);
    const times = Array.from(
      { length: live.length > 0 ? count : 0 },
      () => lastMs + 1 + Math.floor(rng.next() * (now - lastMs)),
    );
    times.sort((a, b) => a - b);
    for (const at of times) addCheckIn(world, at, rng.pick(live).index, { ongoing: true });
    const ended = endOngoingVisits(world, now, true);
    lastMs = now;
    return { arrived: times.length, ended };
  };

  return {
    tick,
    start: (intervalMs) => {
      if (timer) return;
      lastMs = clock.nowMs();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    stop: () => {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
