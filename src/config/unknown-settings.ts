import { closest, distance } from 'fastest-levenshtein';
import { envSchema } from './env-schema.js';

// A setting with a typo is not an error (the variable is simply not ours), so nothing stopped
// `CHECKINS_LOOKBAK=2h` from being ignored in silence. Every command warns about such names at
// start-up and `doctor` prints them as WARN lines (issue 40).

/** Every variable the configuration reads: the env schema's keys, nothing typed again. */
export const KNOWN_SETTINGS: readonly string[] = Object.keys(envSchema.shape);

/**
 * Leading words of known settings that other software uses too (`HTTP_PROXY`, `REDIS_HOST` of a
 * container image, `LOG_FORMAT`): a name under them is flagged only when it is close to a setting.
 */
const SHARED_PREFIXES = new Set(['HTTP', 'LOG', 'DATABASE', 'REDIS', 'STATUS', 'TOKEN', 'WORKER']);

/** `SVC`, `CHECKINS`, `ALERT`, …: the first word of every known setting that is ours alone. */
const PRODUCT_PREFIXES: ReadonlySet<string> = new Set(
  KNOWN_SETTINGS.map((name) => name.split('_')[0] ?? name).filter((word) => !SHARED_PREFIXES.has(word)),
);

export interface UnknownSetting {
  name: string;
  /** The known setting it resembles, when one is close enough. */
  suggestion: string | undefined;
  source: 'environment' | '.env';
}

/** Edits allowed for a name to count as a typo of a setting: 2, or 3 for long names. */
const maxEdits = (name: string) => (name.length >= 16 ? 3 : 2);

/**
 * Names that look like one of ours but are not: either close to a known setting (a typo) or under
 * one of the product's prefixes. Pure: the caller passes the names and where each came from.
 */
export function findUnknownSettings(
  names: Iterable<string>,
  fromDotEnv: ReadonlySet<string> = new Set(),
): UnknownSetting[] {
  const known = new Set(KNOWN_SETTINGS);
  const found: UnknownSetting[] = [];
  for (const name of [...new Set(names)].sort()) {
    if (known.has(name) || !/^[A-Z][A-Z0-9_]*$/.test(name)) continue;
    const nearest = closest(name, [...known]);
    const close = distance(name, nearest) <= maxEdits(name);
    const ours = PRODUCT_PREFIXES.has(name.split('_')[0] ?? name);
    if (!close && !ours) continue;
    found.push({
      name,
      suggestion: close ? nearest : undefined,
      source: fromDotEnv.has(name) ? '.env' : 'environment',
    });
  }
  return found;
}

/** `unknown setting CHECKINS_LOOKBAK (in .env): did you mean CHECKINS_LOOKBACK?` */
export function describeUnknownSetting(setting: UnknownSetting): string {
  const where = setting.source === '.env' ? ' (in .env)' : '';
  return setting.suggestion === undefined
    ? `unknown setting ${setting.name}${where}: not a rewards-etl setting (docs/configuration.md lists them)`
    : `unknown setting ${setting.name}${where}: did you mean ${setting.suggestion}?`;
}
