import { mix32 } from '../prng.js';

/**
 * How visits spread over a local day. `daily`: quiet nights, a lunch peak, a bigger dinner peak (the
 * default). `flat`: the same number of visits a day, evenly spread, so that a test's window holds as
 * many rows at 4 a.m. as at 7 p.m. in the venues' zones (the test suite runs this way; issue 37).
 */
export type Rhythm = 'daily' | 'flat';
export const RHYTHMS: readonly Rhythm[] = ['daily', 'flat'];

/** Relative visit intensity by local hour; `flat` is the daily rhythm's mean at every hour. */
export function visitIntensity(localHour: number, rhythm: Rhythm = 'daily'): number {
  return rhythm === 'flat' ? DAILY_MEAN : dailyIntensity(localHour);
}

function dailyIntensity(localHour: number): number {
  const open = localHour >= 7 && localHour < 23.5 ? 0.12 : 0.02;
  return (
    open + peak(localHour, 12.6, 0.9, 1.0) + peak(localHour, 19.3, 1.3, 1.4) + peak(localHour, 8.5, 0.7, 0.2)
  );
}

function peak(localHour: number, center: number, width: number, height: number): number {
  return height * Math.exp(-((localHour - center) ** 2) / (2 * width * width));
}

const DAILY_MEAN = Array.from({ length: 1440 }, (_, minute) => dailyIntensity(minute / 60)).reduce(
  (sum, value) => sum + value / 1440,
  0,
);

/** The rhythm a simulator follows when its options name none: `SIMULATOR_RHYTHM`, else daily. */
export function defaultRhythm(env: NodeJS.ProcessEnv = process.env): Rhythm {
  const named = env['SIMULATOR_RHYTHM'];
  if (named === undefined || named === '') return 'daily';
  if (!RHYTHMS.includes(named as Rhythm))
    throw new RangeError(`SIMULATOR_RHYTHM must be one of ${RHYTHMS.join(', ')}; got "${named}"`);
  return named as Rhythm;
}

const OFFSETS = new Map<string, number>();

/**
 * UTC offset of an IANA zone at an instant, in minutes (DST inside the period is ignored by callers).
 * Remembered per zone and hour (the zones of the catalogue change offset on the hour): a formatter
 * costs about 0.1 ms, and 20,000 locations ask.
 */
export function utcOffsetMinutes(timeZone: string, atMs: number): number {
  const key = `${timeZone}@${Math.floor(atMs / 3_600_000)}`;
  let offset = OFFSETS.get(key);
  if (offset === undefined) {
    if (OFFSETS.size > 10_000) OFFSETS.clear();
    offset = computeUtcOffsetMinutes(timeZone, atMs);
    OFFSETS.set(key, offset);
  }
  return offset;
}

function computeUtcOffsetMinutes(timeZone: string, atMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(new Date(atMs));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'));
  return Math.round((asUtc - Math.floor(atMs / 60_000) * 60_000) / 60_000);
}

/** A visit's planned length, derived from its sequence number so live mode can end it later. */
export function plannedVisitMs(seq: number, cohort: 'qsr' | 'fsr'): number {
  const h = mix32(seq ^ 0x5bd1e995);
  const minutes = cohort === 'qsr' ? 10 + (h % 30) : 45 + (h % 100);
  return minutes * 60_000;
}
