import type { ChangeCounter } from './changes/change-context.js';
import type { ChangeModel } from './changes/change-model.js';
import type { ChangeSettings } from './changes/change-settings.js';
import type { SimContext } from './context.js';
import type { TruthKind, TruthReader } from './truth-log.js';
import type { WorldSize } from './world-size.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null =>
  ms === null || !Number.isFinite(ms) ? null : iso(ms);

export interface WorldInfo {
  seed: number;
  anchor: string;
  days: number;
  /** Counts as they are now: restaurants and locations not removed, pending intents, all check-ins. */
  size: { [K in keyof WorldSize]: number } & { checkIns: number };
  /** Null when the world does not change by itself (the default). */
  changes: {
    settings: ChangeSettings;
    startedAt: string;
    intentsPerHour: number;
    feedCheckInsPerDay: number;
    /** Changes applied so far, per process. */
    applied: Record<ChangeCounter, number>;
  } | null;
  timeline: { appliedUntil: string | null; pending: number; nextAt: string | null };
  timeScale: number;
  truth: { changes: number; oldestAt: string | null };
}

export interface AdvanceResult {
  from: string;
  to: string;
  /** Timeline events fired on the way (changes, and the model's own steps). */
  events: number;
  /** Changes logged in the truth with from < at <= to, per kind. */
  changes: Record<TruthKind, number>;
}

/** What a reset may change; unset fields keep the current world's. */
export interface WorldReset {
  seed?: number;
  anchor?: Date;
  days?: number;
  checkIns?: number;
  size?: Partial<WorldSize>;
  /** true: the change model with its defaults; an object: with those settings; false: a static world. */
  changes?: boolean | Partial<ChangeSettings>;
}

export interface WorldControl {
  info(): WorldInfo;
  /**
   * Sets the clock to `at` and applies every change due up to it, in order (a discrete-event caller's
   * step). A RangeError when changes after `at` are applied already: time cannot be undone.
   */
  advanceTo(at: Date): AdvanceResult;
  advanceBy(ms: number): AdvanceResult;
  /**
   * Generates the world anew with other sizes, seed or change settings. Kept: the clock, the faults,
   * the request log, the API keys, the admin token and every token issued (valid while their member
   * exists: member ids depend only on seed and index).
   */
  reset(options: WorldReset): WorldInfo;
  truth: TruthReader;
}

export function createWorldControl(
  ctx: SimContext,
  model: ChangeModel | null,
  reset: (options: WorldReset) => WorldInfo,
): WorldControl {
  const { world, clock } = ctx;
  const { truth, timeline } = world;
  const advanceTo = (at: Date): AdvanceResult => {
    const target = at.getTime();
    if (Number.isNaN(target)) throw new RangeError('advanceTo needs a valid date');
    const from = timeline.appliedUntilMs();
    if (target < from)
      throw new RangeError(
        `cannot advance to ${iso(target)}: changes up to ${iso(from)} are applied already`,
      );
    clock.set(at);
    const events = timeline.runUntil(target);
    return { from: iso(from), to: iso(target), events, changes: truth.counts(from, target) };
  };
  return {
    info: () => {
      const retained = truth.retained();
      let openIntents = 0;
      const now = clock.nowMs();
      for (const i of world.intents.values())
        if (i.paidAtMs === null && i.canceledAtMs === null && (i.expiresAtMs ?? Infinity) > now)
          openIntents++;
      return {
        seed: world.seed,
        anchor: iso(world.anchorMs),
        days: world.days,
        size: {
          restaurants: world.restaurants.filter((r) => !r.removed).length,
          locations: world.locations.filter((l) => !l.removed).length,
          challenges: world.challenges.length,
          members: world.members.length,
          openIntents,
          checkIns: world.checkIns.count,
        },
        changes: model && {
          settings: model.settings,
          startedAt: iso(model.startedAtMs),
          intentsPerHour: model.intentsPerHour,
          feedCheckInsPerDay: model.feedCheckInsPerDay,
          applied: model.counters(),
        },
        timeline: {
          appliedUntil: isoOrNull(timeline.appliedUntilMs()),
          pending: timeline.pending,
          nextAt: isoOrNull(timeline.nextAt()),
        },
        timeScale: clock.timeScale(),
        truth: { changes: retained.changes, oldestAt: isoOrNull(retained.oldestAtMs) },
      };
    },
    advanceTo,
    advanceBy: (ms) => {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advanceBy needs a non-negative number of ms');
      return advanceTo(new Date(clock.nowMs() + ms));
    },
    reset,
    truth: {
      lastChangedAt: (kind, id) => truth.lastChangedAt(kind, id),
      changeTimes: (kind, id) => truth.changeTimes(kind, id),
      changesSince: (sinceMs, untilMs) => truth.changesSince(sinceMs, untilMs),
      counts: (sinceMs, untilMs) => truth.counts(sinceMs, untilMs),
      retained: () => truth.retained(),
    },
  };
}
