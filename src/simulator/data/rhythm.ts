import { mix32 } from '../prng.js';

/** Relative visit intensity by local hour: quiet nights, a lunch peak, a bigger dinner peak. */
export function visitIntensity(localHour: number): number {
  const open = localHour >= 7 && localHour < 23.5 ? 0.12 : 0.02;
  return (
    open + peak(localHour, 12.6, 0.9, 1.0) + peak(localHour, 19.3, 1.3, 1.4) + peak(localHour, 8.5, 0.7, 0.2)
  );
}

function peak(localHour: number, center: number, width: number, height: number): number {
  return height * Math.exp(-((localHour - center) ** 2) / (2 * width * width));
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
