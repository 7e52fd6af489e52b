import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The stream registry (src/streams/registry.ts) is the top of src/streams/ and the stream names
// and facts (src/sync/stream-facts.ts) are below the whole folder: nothing the registry imports or
// loads, type imports and lazy `import()` included, comes back to the registry (issue 42 found a
// 37-file circle there).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each file of src/ to the files of src/ it imports (static, type-only or lazy). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(join(ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(SPECIFIER)].map((match) =>
      relative(ROOT, resolve(dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts'))),
    );
    graph.set(relative(ROOT, file), targets);
  }
  return graph;
}

/** A path of imports from `from` to `to`, or null when `to` is not reachable. */
function importPath(graph: Map<string, string[]>, from: string, to: string): string[] | null {
  const seen = new Set<string>();
  const walk = (file: string, path: string[]): string[] | null => {
    if (file === to) return [...path, file];
    if (seen.has(file)) return null;
    seen.add(file);
    for (const next of graph.get(file) ?? []) {
      const found = walk(next, [...path, file]);
      if (found !== null) return found;
    }
    return null;
  };
  return walk(from, []);
}

describe('the stream registry', () => {
  const graph = importGraph();
  const REGISTRY = 'src/streams/registry.ts';

  it('is imported by nothing it imports or loads', () => {
    const below = graph.get(REGISTRY) ?? [];
    expect(below).toContain('src/sync/stream-facts.ts');
    expect(below).toContain('src/streams/checkins/pass.ts');
    const circles = below.map((file) => importPath(graph, file, REGISTRY)).filter((path) => path !== null);
    expect(circles).toEqual([]);
  });

  it('stream names and facts import nothing', () => {
    expect(graph.get('src/sync/stream-facts.ts')).toEqual([]);
  });

  it('the walk finds a circle when there is one (the check itself)', () => {
    const circle = new Map([
      ['a', ['b']],
      ['b', ['a']],
    ]);
    expect(importPath(circle, 'b', 'a')).toEqual(['b', 'a']);
  });
});
