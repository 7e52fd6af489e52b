const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses durations written like `90s`, `2m`, `24h`, `7d` (also `500ms`, `1h30m`) into milliseconds. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const part = /(\d+)(ms|s|m|h|d)/gy;
  let total = 0;
  let consumed = 0;
  for (const match of trimmed.matchAll(part)) {
    const [whole, amount, unit] = match;
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
    consumed += whole.length;
  }
  if (trimmed.length === 0 || consumed !== trimmed.length) {
    throw new Error(`"${text}" is not a duration; write it like 90s, 2m, 24h or 7d`);
  }
  return total;
}

export function formatDuration(ms: number): string {
  if (ms % UNIT_MS.d === 0 && ms > 0) return `${ms / UNIT_MS.d}d`;
  if (ms % UNIT_MS.h === 0 && ms > 0) return `${ms / UNIT_MS.h}h`;
  if (ms % UNIT_MS.m === 0 && ms > 0) return `${ms / UNIT_MS.m}m`;
  if (ms % UNIT_MS.s === 0) return `${ms / UNIT_MS.s}s`;
  return `${ms}ms`;
}
