import { createPrng, type Prng } from '../prng.js';
import type { World } from '../world.js';
import type { ChangeSettings } from './change-settings.js';

/** Events fired by the change model, per process (for `GET /_admin/world` and live-mode ticks). */
export const CHANGE_COUNTERS = [
  'visitStarted',
  'visitEnded',
  'statusChanged',
  'tagsChanged',
  'profileChanged',
  'restaurantEdited',
  'locationEdited',
  'openHoursEdited',
  'challengeAdded',
  'challengeEnded',
  'intentCreated',
  'intentPaid',
  'intentCanceled',
  'intentRefunded',
  'feedArrived',
  'feedEnded',
] as const;

export type ChangeCounter = (typeof CHANGE_COUNTERS)[number];

export interface ChangeContext {
  world: World;
  settings: ChangeSettings;
  /** When the model started: every first wait is measured from here. */
  startMs: number;
  /** One random stream per process, so turning one process off leaves the others' draws as they were. */
  rng(process: string): Prng;
  schedule(atMs: number, fire: (atMs: number) => void): void;
  count(counter: ChangeCounter): void;
}

export function createChangeContext(
  world: World,
  settings: ChangeSettings,
  startMs: number,
  counters: Record<ChangeCounter, number>,
): ChangeContext {
  const streams = new Map<string, Prng>();
  return {
    world,
    settings,
    startMs,
    rng: (process) => {
      let stream = streams.get(process);
      if (!stream) {
        stream = createPrng(world.seed, `changes:${process}`);
        streams.set(process, stream);
      }
      return stream;
    },
    schedule: (atMs, fire) => world.timeline.schedule(atMs, fire),
    count: (counter) => {
      counters[counter]++;
    },
  };
}
