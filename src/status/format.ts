// Small formatting helpers shared by the terminal and HTML renderings.

/** "45 s", "12 min", "3 h 5 min", "2 d 4 h": two units at most, for people. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** "3 min ago" / "in 3 min", relative to `now`. */
export function relativeTime(at: string | null, now: Date): string {
  if (at === null) return '—';
  const seconds = (new Date(at).getTime() - now.getTime()) / 1000;
  if (Math.abs(seconds) < 1) return 'now';
  return seconds < 0 ? `${formatDuration(-seconds)} ago` : `in ${formatDuration(seconds)}`;
}

/** "2026-11-22 14:03 UTC": minutes are enough on a status screen; UTC so hosts agree. */
export function formatInstant(at: string | null): string {
  if (at === null) return '—';
  return `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`;
}

/** 1234567 → "1,234,567". */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

// C0 and C1 control characters and DEL (escape sequences start with ESC or CSI), plus the Unicode
// bidirectional overrides and isolates that reorder what a terminal shows.
