import { parseDuration } from '../duration.js';
import {
  CHANGE_SETTING_NAMES,
  resolveChangeSettings,
  type ChangeSettings,
  type MemberActivityClass,
} from './changes/change-settings.js';
import { checkTimeScale } from './clock.js';
import { RHYTHMS, type Rhythm } from './data/rhythm.js';
import { PRODUCTION_WORLD_SIZE, resolveWorldSize, type WorldSize } from './world-size.js';

/** The `rewards-etl simulator` flags about the world, as commander hands them over. */
export interface WorldFlags {
  world?: string;
  restaurants?: number;
  locations?: number;
  challenges?: number;
  members?: number;
  openIntents?: number;
  changes?: boolean;
  /** `name=value`, repeatable. */
  change?: string[];
  timeScale?: string;
  rhythm?: string;
}

export interface WorldFlagOptions {
  size: Partial<WorldSize>;
  changes: Partial<ChangeSettings> | false;
  timeScale: number;
  /** Unset: the simulator's default (`SIMULATOR_RHYTHM`, else daily). */
  rhythm?: Rhythm;
}

const PRESETS: Record<string, Partial<WorldSize>> = { fixture: {}, production: PRODUCTION_WORLD_SIZE };

/**
 * Flags to simulator options. `--world production` sizes the world as issue 32 does; single counts
 * override it. `--change name=value` (implies `--changes`) sets one rate: durations for the
 * `…Ms` settings (`statusEveryMs=3d`), numbers for the others, `auto` for the derived ones, and
 * `memberActivity=0.1:4h,0.3:3d,0.6:30d`. A RangeError names the flag when a value is wrong.
 */
export function worldOptionsFromFlags(flags: WorldFlags): WorldFlagOptions {
  const preset = PRESETS[flags.world ?? 'fixture'];
  if (!preset) throw new RangeError(`--world must be one of ${Object.keys(PRESETS).join(', ')}`);
  const size: Partial<WorldSize> = { ...preset };
  const counts = {
    restaurants: flags.restaurants,
    locations: flags.locations,
    challenges: flags.challenges,
    members: flags.members,
    openIntents: flags.openIntents,
  };
  for (const [key, value] of Object.entries(counts) as [keyof WorldSize, number | undefined][])
    if (value !== undefined) size[key] = value;
  resolveWorldSize(size); // reports a bad count now, naming it
  const patch: Partial<Record<keyof ChangeSettings, unknown>> = {};
  for (const assignment of flags.change ?? []) {
    const [name = '', ...rest] = assignment.split('=');
    const value = rest.join('=').trim();
    if (!CHANGE_SETTING_NAMES.includes(name as keyof ChangeSettings) || value === '')
      throw new RangeError(
        `--change takes name=value with a name among ${CHANGE_SETTING_NAMES.join(', ')}; got "${assignment}"`,
      );
    patch[name as keyof ChangeSettings] = changeValue(name as keyof ChangeSettings, value);
  }
  const enabled = flags.changes === true || Object.keys(patch).length > 0;
  const changes = enabled ? (patch as Partial<ChangeSettings>) : false;
  if (changes) resolveChangeSettings(changes);
  const timeScale = flags.timeScale === undefined ? 1 : Number(flags.timeScale);
  checkTimeScale(timeScale);
  if (flags.rhythm !== undefined && !RHYTHMS.includes(flags.rhythm as Rhythm))
    throw new RangeError(`--rhythm must be one of ${RHYTHMS.join(', ')}; got "${flags.rhythm}"`);
  const rhythm = flags.rhythm as Rhythm | undefined;
  return { size, changes, timeScale, ...(rhythm ? { rhythm } : {}) };
}

function changeValue(name: keyof ChangeSettings, text: string): unknown {
  const fail = (why: string): never => {
    throw new RangeError(`--change ${name}: ${why}, got "${text}"`);
  };
  if (name === 'memberActivity') return text.split(',').map((part) => activityClass(part, fail));
  if ((name === 'intentsPerHour' || name === 'feedCheckInsPerDay') && text === 'auto') return null;
  if (name.endsWith('Ms')) {
    if (text === '0' || text === 'never') return 0;
    try {
      return parseDuration(text);
    } catch {
      return fail('expected a duration like 90s, 4h or 7d, or never');
    }
  }
  const value = Number(text);
  return Number.isFinite(value) ? value : fail('expected a number');
}

function activityClass(part: string, fail: (why: string) => never): MemberActivityClass {
  const [share, every] = part.split(':');
  const parsedShare = Number(share);
  if (!Number.isFinite(parsedShare) || every === undefined) return fail('expected share:interval,…');
  try {
    return { share: parsedShare, visitEveryMs: every === 'never' ? 0 : parseDuration(every) };
  } catch {
    return fail('expected share:interval,… with intervals like 4h or 3d');
  }
}
