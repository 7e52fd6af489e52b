import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The repository as the docs tests see it: its files and folders, less what runs write (the
// folders .gitignore names), and the pages whose facts are checked.

export const ROOT = new URL('../../../', import.meta.url).pathname;

/** The pages a reader is sent to: the newcomer's README, the two reports, every topic page. */
export function documentationPages(): string[] {
  const topics = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'RELIABILITY.md', 'BENCHMARKS.md', ...topics.sort()];
}

export function readRepositoryFile(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** Folders that .gitignore names (`dist/`, `.bench/`, `test-artifacts/`…), and git's own. */
function generatedFolders(): Set<string> {
  const ignored = readRepositoryFile('.gitignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.endsWith('/') && !line.includes('*'))
    .map((line) => line.replace(/^\//, '').replace(/\/$/, ''));
  return new Set(['.git', ...ignored]);
}

export interface RepositoryTree {
  files: Set<string>;
  folders: Set<string>;
  /** Whether a path is one of the generated folders or inside one: output, not part of the repository. */
  isGenerated(path: string): boolean;
}

export function repositoryTree(): RepositoryTree {
  const generated = generatedFolders();
  const files = new Set<string>();
  const folders = new Set<string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (generated.has(path)) continue;
        folders.add(path);
        walk(path);
      } else files.add(path);
    }
  };
  walk('');
  return {
    files,
    folders,
    isGenerated: (path) => [...generated].some((folder) => path === folder || path.startsWith(`${folder}/`)),
  };
}
