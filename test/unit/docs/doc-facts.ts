import GithubSlugger from 'github-slugger';

// What the documentation states as fact, read out of its markdown: the repository paths it names,
// its links, its headings and the defaults it quotes. Pure: the tests beside this file read the
// files and compare these facts with the repository and the env schema.

/** Something a page says, with the line it says it on (1-based), for messages a writer can act on. */
export interface Located<T> {
  line: number;
  fact: T;
}

/** The lines of a page with fenced code blocks blanked: a `# comment` in a shell block is no heading. */
export function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && opener !== undefined) {
      fence = opener;
      return '';
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence)) fence = undefined;
      return '';
    }
    return line;
  });
}

/** Each heading's text, without its `#`s. */
export function headingsOf(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) => {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)?.[1];
    return heading === undefined ? [] : [heading];
  });
}

/** The anchors GitHub gives a page's headings (`#one-budget-across-streams`), repeats numbered as it does. */
export function anchorsOf(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  return new Set(headingsOf(markdown).map((heading) => slugger.slug(heading.replace(/`/g, ''))));
}

/** The repository's top-level folders whose paths a page writes from the root (`src/…`, `.ci/run`). */
const ROOTED = /^(src|test|jobs|migrations|deploy|bench|docs|\.ci)(\/|$)/;
/** Names of files that a bare or partial path (`sync/backoff.ts`, `page-window.ts`) may point at. */
const FILE_NAME = /\.(ts|js|json|ya?ml|md|sql|service|sh)$/;
/** A placeholder (`test/unit/<dir>/`, `src/*.ts`, `${SVC_API_BASE_URL}/…`) names no one file. */
const PLACEHOLDER = /[<>*…{}$]/;

export type PathReference =
  /** Written from the repository's root: exactly this file or folder must exist. */
  | { kind: 'rooted'; path: string }
  /** Written relative to a folder the prose names (`sync/backoff.ts`): some file must end so. */
  | { kind: 'partial'; path: string };

/** What an inline code span names in the repository, if it names a path at all. */
export function pathReferenceIn(code: string): PathReference | undefined {
  const text = code
    .trim()
    .replace(/^\.\//, '')
    .replace(/#[\w-]*$/, ''); // the file of `docs/x.md#anchor`
  if (text === '' || /\s/.test(text) || PLACEHOLDER.test(text)) return undefined;
  if (text.startsWith('/') || text.includes('://') || /[=:@,;()]/.test(text)) return undefined;
  if (ROOTED.test(text)) return { kind: 'rooted', path: text };
  if (FILE_NAME.test(text) && /^[\w./-]+$/.test(text)) return { kind: 'partial', path: text };
  return undefined;
}

/** Every repository path a page names in an inline code span. */
export function pathReferences(markdown: string): Located<PathReference>[] {
  return proseLines(markdown).flatMap((line, index) =>
    [...line.matchAll(/(`+)([^`]+?)\1(?!`)/g)].flatMap(([, , code = '']) => {
      const reference = pathReferenceIn(code);
      return reference === undefined ? [] : [{ line: index + 1, fact: reference }];
    }),
  );
}

export interface LinkTarget {
  /** The file, as written (relative to the page); '' for a link within the page. */
  file: string;
  anchor: string | undefined;
}

/** Every link of a page to a file of the repository or an anchor (web addresses left out). */
export function markdownLinks(markdown: string): Located<LinkTarget>[] {
  return proseLines(markdown).flatMap((line, index) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].flatMap(
      ([, target = '']) => {
        if (/^[a-z][a-z+.-]*:/i.test(target)) return [];
        const [file = '', anchor] = target.split('#');
        return [{ line: index + 1, fact: { file: decodeURI(file), anchor } }];
      },
    ),
  );
}

export interface SectionCitation {
  /** The page, from the repository's root: `docs/rate-limit.md`. */
  page: string;
  /** The quoted heading (`"One budget"`), or the anchor of `docs/page.md#anchor`. */
  section: { heading: string } | { anchor: string };
}

/**
 * The docs sections a source file cites: `docs/page.md, "Heading"` (the heading may be shortened
 * to its first words, and may wrap onto the next comment line) or `docs/page.md#anchor`.
 */
export function sectionCitations(source: string): Located<SectionCitation>[] {
  const citations: Located<SectionCitation>[] = [];
  const lineOf = (offset: number) => source.slice(0, offset).split('\n').length;
  for (const match of source.matchAll(/\b(docs\/[\w-]+\.md),(?:\s|\*|\/\/)*"([^"\n]+)"/g)) {
    const [, page = '', heading = ''] = match;
    citations.push({ line: lineOf(match.index), fact: { page, section: { heading } } });
  }
  for (const match of source.matchAll(/\b(docs\/[\w-]+\.md)#([\w-]+)/g)) {
    const [, page = '', anchor = ''] = match;
    citations.push({ line: lineOf(match.index), fact: { page, section: { anchor } } });
  }
  return citations;
}

/** Whether a cited heading is one of the page's: the whole heading, or its first words. */
export function citesHeading(headings: readonly string[], cited: string): boolean {
  const plain = (text: string) => text.replace(/`/g, '').trim().toLowerCase();
  return headings.some((heading) => {
    const whole = plain(heading);
    const start = plain(cited);
    return whole === start || whole.startsWith(`${start} `) || whole.startsWith(`${start}:`);
  });
}

/** What a settings table or the prose says a variable's default is. */
export type QuotedDefault =
  /** A value as a user would write it in the environment (`1m`, `32MB`, `0.2`, `127.0.0.1`). */
  | { kind: 'value'; text: string }
  /** The variable has no default: unset means off, or it must be given. */
  | { kind: 'none' }
  /** A default said in words (`30 days before first run`), left to the reader. */
  | { kind: 'words'; text: string };

export interface DefaultQuote {
  variable: string;
  quoted: QuotedDefault;
}

/** A value written as prose (`60 s`, `15 min`, `64 KB`, `20%`) in the form the environment takes. */
export function asEnvironmentValue(text: string): string {
  const value = text.trim();
  const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(value);
  if (percent !== null) return String(Number(percent[1]) / 100);
  const units: Record<string, string> = { min: 'm', minute: 'm', minutes: 'm', second: 's', seconds: 's' };
  Object.assign(units, { hour: 'h', hours: 'h', day: 'd', days: 'd' });
  const amount = /^(\d+(?:\.\d+)?)\s+([A-Za-z]+)$/.exec(value);
  if (amount === null) return value;
  const [, number = '', unit = ''] = amount;
  return `${number}${units[unit] ?? unit}`;
}

/** A value in prose: a code span, or a number with an optional unit (`60s`, `15 min`, `20%`, `64 KB`). */
const VALUE = String.raw`(?:\x60([^\x60]+)\x60|(\d+(?:\.\d+)?(?:\s?(?:%|ms|s|m|h|d|min|minutes?|seconds?|hours?|days?|[KMG]B)\b|%)?))`;
/** A variable's name, in a code span or not (comments in deploy/ write it bare). */
const VARIABLE = String.raw`\x60?\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b\x60?`;

/**
 * The defaults a page quotes in prose, in the forms the docs use: `VAR` (value), `VAR` (default
 * value…), `VAR` defaults to value, and `VAR` `value` (was `old`) where a default changed.
 */
export function proseDefaults(markdown: string): Located<DefaultQuote>[] {
  // A quote may wrap onto the next line: a space in a form is any run of white space.
  const form = (text: string) => new RegExp(text.replace(/ /g, String.raw`\s+`), 'g');
  const alone = String.raw`(?<!:\x60?)${VARIABLE}`; // not the second of `HOST`:`PORT`
  const singles = [
    form(String.raw`${alone} \(${VALUE}\)`),
    form(String.raw`${alone} \(default:? ${VALUE}[,;:)]`),
    form(String.raw`${alone} defaults to ${VALUE}`),
    form(String.raw`${alone} ${VALUE} \(was `),
  ];
  // `HTTP_HOST`:`HTTP_PORT` (default `127.0.0.1:9464`): one default for each of the two.
  const hostPort = form(String.raw`${VARIABLE}:${VARIABLE} \(default:? \x60([^\x60:]+):(\d+)\x60`);
  const text = proseLines(markdown).join('\n');
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length;
  const quote = (offset: number, variable: string, value: string) => ({
    line: lineOf(offset),
    fact: {
      variable,
      quoted: { kind: 'value' as const, text: asEnvironmentValue(value.replace(/\s+/g, ' ')) },
    },
  });
  const pairs = [...text.matchAll(hostPort)].flatMap((match) => {
    const [, host = '', port = '', hostValue = '', portValue = ''] = match;
    return [quote(match.index, host, hostValue), quote(match.index, port, portValue)];
  });
  const quotes = singles.flatMap((pattern) =>
    [...text.matchAll(pattern)].map((match) => {
      const [, variable = '', code, bare] = match;
      return quote(match.index, variable, code ?? bare ?? '');
    }),
  );
  return [...pairs, ...quotes].sort((a, b) => a.line - b.line);
}

/** The cells of a table row, split on the `|`s that are not escaped (`\|`). */
function cellsOf(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

/**
 * The defaults of every settings table (`variable | default | meaning`). A cell may name several
 * variables (`HTTP_HOST`, `HTTP_PORT`) with one default for all or one each (`127.0.0.1`, `9464`);
 * a remark in parentheses (`(was 2m)`) is no default, and a default said in words (`30 days before
 * first run`) is kept as words.
 */
export function settingsTableDefaults(markdown: string): Located<DefaultQuote>[] {
  const quotes: Located<DefaultQuote>[] = [];
  let inSettings = false;
  proseLines(markdown).forEach((line, index) => {
    if (!line.trim().startsWith('|')) {
      inSettings = false;
      return;
    }
    const cells = cellsOf(line);
    if (cells.length >= 3 && /^variable$/i.test(cells[0] ?? '') && /^default$/i.test(cells[1] ?? '')) {
      inSettings = true;
      return;
    }
    if (!inSettings || /^:?-+:?$/.test(cells[0] ?? '')) return;
    const variables = [...(cells[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map(([, name = '']) => name);
    const defaults = defaultsInCell(cells[1] ?? '');
    const each = defaults.length === 1 ? variables.map(() => defaults[0]) : defaults;
    if (each.length !== variables.length) {
      throw new Error(`line ${index + 1}: ${variables.length} variables but ${defaults.length} defaults`);
    }
    variables.forEach((variable, i) => {
      const quoted = each[i];
      if (quoted !== undefined) quotes.push({ line: index + 1, fact: { variable, quoted } });
    });
  });
  return quotes;
}

/** One default cell: a value, `none` or words per variable. */
function defaultsInCell(cell: string): QuotedDefault[] {
  const withoutRemarks = cell.replace(/\s*\([^)]*\)/g, '').trim();
  if (withoutRemarks === '') return [{ kind: 'words', text: cell }];
  return withoutRemarks.split(/,\s*/).map((part) => {
    if (/^none\b/i.test(part)) return { kind: 'none' };
    const code = /^`([^`]+)`$/.exec(part)?.[1];
    return code === undefined ? { kind: 'words', text: part } : { kind: 'value', text: code };
  });
}
