import type { SchemaDriftEntry } from './status-report.js';

// How `status` and the status page show one drift row: shared, so both say the same thing.

/** `added`, `missing`, `type changed`. */
export function driftChangeLabel(change: SchemaDriftEntry['change']): string {
  return change.replace('_', ' ');
}

/** The example as short JSON text (the JSON report has it whole); `—` when none was kept. */
export function driftExampleText(example: unknown, max = 40): string {
  if (example === null || example === undefined) return '—';
  const text = JSON.stringify(example) ?? '—';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One line for the drift summary: `2 added, 1 missing`. */
export function driftSummary(entries: readonly SchemaDriftEntry[]): string {
  const by = new Map<string, number>();
  for (const entry of entries) by.set(entry.change, (by.get(entry.change) ?? 0) + 1);
  return ['added', 'missing', 'type_changed']
    .filter((change) => by.has(change))
    .map((change) => `${by.get(change)} ${driftChangeLabel(change as SchemaDriftEntry['change'])}`)
    .join(', ');
}
