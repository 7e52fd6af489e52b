import type { World } from '../world.js';
import { CHANGE_COUNTERS, createChangeContext, type ChangeCounter } from './change-context.js';
import type { ChangeSettings } from './change-settings.js';
import { startCatalogChanges } from './catalog-changes.js';
import { startFeedChanges } from './feed-changes.js';
import { startIntentChanges } from './intent-changes.js';
import { startMemberChanges } from './member-changes.js';

/**
 * The world changing over simulated time: every process puts its next change on the world's
 * timeline, which applies it when the clock reaches it (on the next request, or an explicit advance).
 * Nothing runs on a timer and nothing is sampled per step, so the changes do not depend on how the
 * clock got there, and a quiet request costs one look at the top of a heap.
 */
export interface ChangeModel {
  readonly settings: ChangeSettings;
  readonly startedAtMs: number;
  /** Intents created per hour (from the setting, or derived from the open intents at start). */
  readonly intentsPerHour: number;
  /** Venue-feed check-ins per day. */
  readonly feedCheckInsPerDay: number;
  /** Changes applied so far, per process. */
  counters(): Record<ChangeCounter, number>;
}

export function startChangeModel(
  world: World,
  settings: ChangeSettings,
  options: { startMs: number; defaultFeedCheckInsPerDay: number },
): ChangeModel {
  const counters = Object.fromEntries(CHANGE_COUNTERS.map((c) => [c, 0])) as Record<ChangeCounter, number>;
  const ctx = createChangeContext(world, settings, options.startMs, counters);
  const feedPerDay = settings.feedCheckInsPerDay ?? options.defaultFeedCheckInsPerDay;
  startMemberChanges(ctx);
  startCatalogChanges(ctx);
  const intents = startIntentChanges(ctx);
  startFeedChanges(ctx, feedPerDay);
  return {
    settings,
    startedAtMs: options.startMs,
    intentsPerHour: intents.intentsPerHour,
    feedCheckInsPerDay: feedPerDay,
    counters: () => ({ ...counters }),
  };
}
