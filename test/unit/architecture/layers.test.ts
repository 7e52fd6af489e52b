import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The layer graph the lint enforces (MAY_IMPORT, eslint.config.js) is the picture of
// docs/development.md, "Architecture": every arrow points down, so no two directories import each
// other, directly or around a circle.

/** A path through `mayImport` that comes back to where it started, or null when there is none. */
export function findCycle(mayImport: Record<string, readonly string[]>): string[] | null {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (dir: string): string[] | null => {
    if (state.get(dir) === 'done') return null;
    if (state.get(dir) === 'visiting') return [...path.slice(path.indexOf(dir)), dir];
    state.set(dir, 'visiting');
    path.push(dir);
    for (const below of mayImport[dir] ?? []) {
      const cycle = visit(below);
      if (cycle !== null) return cycle;
    }
    path.pop();
    state.set(dir, 'done');
    return null;
  };
  for (const dir of Object.keys(mayImport)) {
    const cycle = visit(dir);
    if (cycle !== null) return cycle;
  }
  return null;
}

async function mayImport(): Promise<Record<string, string[]>> {
  // A variable specifier: the config is plain JavaScript, outside the TypeScript project.
  const config = new URL('../../../eslint.config.js', import.meta.url).href;
  const module = (await import(config)) as { MAY_IMPORT: Record<string, string[]> };
  return module.MAY_IMPORT;
}

describe('the layers of src/ (MAY_IMPORT, eslint.config.js)', () => {
  it('form no cycle: every arrow of the picture points down', async () => {
    expect(findCycle(await mayImport())).toBeNull();
  });

  it('name only directories that have a rule of their own', async () => {
    const layers = await mayImport();
    const named = new Set(Object.values(layers).flat());
    const unknown = [...named].filter((dir) => !(dir in layers));
    expect(unknown).toEqual([]);
  });

  it('give every directory of src/ a rule, but the CLI at the top', async () => {
    const layers = await mayImport();
    const src = new URL('../../../src/', import.meta.url);
    const dirs = readdirSync(src, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    const ruleless = dirs.map((entry) => entry.name).filter((dir) => dir !== 'cli' && !(dir in layers));
    expect(ruleless).toEqual([]);
  });

  it('finds a circle when there is one (the check itself)', () => {
    expect(findCycle({ a: ['b'], b: ['c'], c: ['a'] })).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle({ warehouse: ['leases'], leases: ['warehouse'] })).toEqual([
      'warehouse',
      'leases',
      'warehouse',
    ]);
    expect(findCycle({ a: ['b', 'c'], b: ['c'], c: [] })).toBeNull();
  });
});
