import { mix32 } from '../prng.js';

/** Relative visit intensity by local hour: quiet nights, a lunch peak, a bigger dinner peak. */
export function visitIntensity(localHour: number): number {
  const peak = (center: number, width: number, height: number): number =>
    height * Math.exp(-((localHour - center) ** 2) / (2 * width * width));
  const open = localHour >= 7 && localHour < 23.5 ? 0.12 : 0.02;
  return open + peak(12.6, 0.9, 1.0) + peak(19.3, 1.3, 1.4) + peak(8.5, 0.7, 0.2);
}

/** UTC offset of an IANA zone at an instant, in minutes (DST inside the period is ignored by callers). */
export function utcOffsetMinutes(timeZone: string, atMs: number): number {
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
