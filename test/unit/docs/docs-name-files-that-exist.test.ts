import { dirname, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  anchorsOf,
  citesHeading,
  headingsOf,
  markdownLinks,
  pathReferenceIn,
  pathReferences,
  sectionCitations,
  type PathReference,
} from './doc-facts.js';
import {
  documentationPages,
  readRepositoryFile,
  repositoryTree,
  type RepositoryTree,
} from './repository-files.js';

// A path, a link or a cited section that no longer exists sends the reader nowhere; every one the
// docs and the code's comments give is checked here, so a move or a rename shows at once.

const tree = repositoryTree();

/** Why a path a page names leads nowhere, or undefined when it leads somewhere. */
function missing(reference: PathReference, repository: RepositoryTree): string | undefined {
  const path = reference.path.replace(/\/$/, '');
  if (repository.isGenerated(path)) return undefined;
  if (reference.kind === 'rooted') {
    return repository.files.has(path) || repository.folders.has(path) ? undefined : `${path} does not exist`;
  }
  const found = [...repository.files].some((file) => file === path || file.endsWith(`/${path}`));
  return found ? undefined : `no file of the repository is ${path}`;
}

/** Files whose comments may cite docs: the code, its tests and tools, and the deployment files. */
function sourceFiles(): string[] {
  return [...tree.files].filter(
    (file) =>
      /^(src|jobs|migrations|bench|test|deploy|\.ci)\//.test(file) ||
      /^[\w.-]+\.(c?js|ts)$/.test(file) ||
      ['Dockerfile', 'docker-compose.yml'].includes(file),
  );
}

describe('every repository path the docs name exists', () => {
  it('README.md, RELIABILITY.md, BENCHMARKS.md and docs/ name, in code spans, only files and folders that exist', () => {
    const problems = documentationPages().flatMap((page) =>
      pathReferences(readRepositoryFile(page)).flatMap(({ line, fact }) => {
        const problem = missing(fact, tree);
        return problem === undefined ? [] : [`${page}:${line}: ${problem}`];
      }),
    );
    expect(problems).toEqual([]);
  });

  it('every link of a page leads to a file that exists, and to a heading the page has', () => {
    const problems = documentationPages().flatMap((page) =>
      markdownLinks(readRepositoryFile(page)).flatMap(({ line, fact }) => {
        const target =
          fact.file === '' ? page : normalize(`${dirname(page)}/${fact.file}`).replace(/\/$/, '');
        if (!tree.files.has(target) && !tree.folders.has(target))
          return [`${page}:${line}: links to ${fact.file}, which does not exist`];
        if (fact.anchor === undefined || !target.endsWith('.md')) return [];
        return anchorsOf(readRepositoryFile(target)).has(fact.anchor)
          ? []
          : [`${page}:${line}: ${target} has no heading #${fact.anchor}`];
      }),
    );
    expect(problems).toEqual([]);
  });

  it('every docs page and section a source comment cites exists (docs/page.md, "Heading" or docs/page.md#anchor)', () => {
    // This folder's own tests cite missing pages on purpose.
    const files = sourceFiles().filter((file) => !file.startsWith('test/unit/docs/'));
    const problems = files.flatMap((file) => {
      const source = readRepositoryFile(file);
      const pages = [...source.matchAll(/\bdocs\/[\w-]+\.md\b/g)].map(([page]) => page);
      const missingPages = [...new Set(pages)]
        .filter((page) => !tree.files.has(page))
        .map((page) => `${file}: cites ${page}, which does not exist`);
      const missingSections = sectionCitations(source).flatMap(({ line, fact }) => {
        if (!tree.files.has(fact.page)) return [];
        const text = readRepositoryFile(fact.page);
        if ('heading' in fact.section) {
          return citesHeading(headingsOf(text), fact.section.heading)
            ? []
            : [`${file}:${line}: ${fact.page} has no heading "${fact.section.heading}"`];
        }
        return anchorsOf(text).has(fact.section.anchor)
          ? []
          : [`${file}:${line}: ${fact.page} has no heading #${fact.section.anchor}`];
      });
      return [...missingPages, ...missingSections];
    });
    expect(problems).toEqual([]);
  });
});

describe('how the docs tests read a page', () => {
  const sampleTree: RepositoryTree = {
    files: new Set(['src/sync/backoff.ts', 'src/worker/queues.ts']),
    folders: new Set(['src', 'src/sync', 'src/worker']),
    isGenerated: (path) => path.startsWith('.bench'),
  };

  it('finds a moved file, written from the root or from its folder', () => {
    const page = [
      'Attempts are 1 (`JOB_ATTEMPTS` in `jobs/queues.ts`); backoff in `sync/backoff.ts`.',
      'The worker: `src/worker/queues.ts`, `src/worker/`; a missing one: `page-window.ts`.',
    ].join('\n');
    const problems = pathReferences(page).flatMap(({ line, fact }) => {
      const problem = missing(fact, sampleTree);
      return problem === undefined ? [] : [`${line}: ${problem}`];
    });
    expect(problems).toEqual([
      '1: jobs/queues.ts does not exist',
      '2: no file of the repository is page-window.ts',
    ]);
  });

  it('takes no placeholder, command, address or run output for a path', () => {
    for (const code of ['test/unit/<dir>/', 'src/*.ts', '${SVC_API_BASE_URL}/oauth/token', '/status.json'])
      expect(pathReferenceIn(code)).toBeUndefined();
    for (const code of ['npx tsx src/cli/main.ts', 'https://example.com/a.md', 'rewards.check_ins'])
      expect(pathReferenceIn(code)).toBeUndefined();
    expect(missing({ kind: 'rooted', path: '.bench/scale.json' }, sampleTree)).toBeUndefined();
    expect(pathReferenceIn('docs/rate-limit.md#429s')).toEqual({
      kind: 'rooted',
      path: 'docs/rate-limit.md',
    });
  });

  it('reads no heading or path inside a fenced code block', () => {
    const page = ['# Title', '```sh', '# not a heading `src/nowhere.ts`', '```', '## Next one'].join('\n');
    expect(headingsOf(page)).toEqual(['Title', 'Next one']);
    expect(pathReferences(page)).toEqual([]);
  });

  it("gives headings GitHub's anchors and finds links to them", () => {
    const page = '## One pass of `payment_intents`\n## Redis that fails over: Sentinel, Cluster\n';
    expect([...anchorsOf(page)]).toEqual([
      'one-pass-of-payment_intents',
      'redis-that-fails-over-sentinel-cluster',
    ]);
    expect(markdownLinks('see [rate limit](rate-limit.md#429s) and [web](https://example.com/x.md)')).toEqual(
      [{ line: 1, fact: { file: 'rate-limit.md', anchor: '429s' } }],
    );
  });

  it('finds a cited section, even wrapped onto the next comment line, by its first words', () => {
    const source = [
      '// the one budget (docs/rate-limit.md,',
      '// "One budget"); docs/simulator.md#world-size',
    ].join('\n');
    expect(sectionCitations(source).map(({ line, fact }) => ({ line, ...fact }))).toEqual([
      { line: 1, page: 'docs/rate-limit.md', section: { heading: 'One budget' } },
      { line: 2, page: 'docs/simulator.md', section: { anchor: 'world-size' } },
    ]);
    const headings = ['Architecture', 'One budget across streams', 'One pass of `payment_intents`'];
    expect(citesHeading(headings, 'One budget')).toBe(true);
    expect(citesHeading(headings, 'One pass')).toBe(true);
    expect(citesHeading(headings, 'Layers')).toBe(false);
    expect(citesHeading(headings, 'One')).toBe(true);
    expect(citesHeading(headings, 'Archi')).toBe(false);
  });
});
