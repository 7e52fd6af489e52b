import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDirOf } from './test-run.js';

// Debian tools some tests need, beyond PostgreSQL and Redis. Outside CI a missing tool skips the
// tests that need it: each skip is recorded in the run's directory (REWARDS_TEST_RUN_ID, set by
// test/run-tests.ts), which prints one summary at the end naming the packages and the command that
// installs them. Under CI=true (.ci/run installs them all) a missing tool fails the run instead, so
// CI never silently loses coverage. REWARDS_TEST_HIDE_TOOLS=pgbouncer,faketime (or `all`) makes
// tools look missing: how a fresh machine is tried on one that has them.

export type OptionalTool = 'pgbouncer' | 'faketime' | 'chromium' | 'promtool';

const LOCATIONS: Record<OptionalTool, { paths: string[]; apt: string; adds: string }> = {
  pgbouncer: {
    paths: ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'],
    apt: 'pgbouncer',
    adds: 'the PgBouncer (transaction pooler) tests',
  },
  faketime: {
    paths: [
      '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
      '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
      '/usr/lib/faketime/libfaketime.so.1',
    ],
    apt: 'faketime',
    adds: 'the clock-skew test',
  },
  chromium: { paths: ['/usr/bin/chromium'], apt: 'chromium', adds: 'the status page browser test' },
  promtool: { paths: ['/usr/bin/promtool'], apt: 'prometheus', adds: 'the alert rules check' },
};

export const OPTIONAL_TOOLS = Object.keys(LOCATIONS) as OptionalTool[];

/** The Debian package that installs `tool`. */
export function packageOf(tool: OptionalTool): string {
  return LOCATIONS[tool].apt;
}

function hidden(tool: OptionalTool): boolean {
  const names = (process.env.REWARDS_TEST_HIDE_TOOLS ?? '').split(',').map((name) => name.trim());
  return names.includes(tool) || names.includes('all');
}

/** Where the tool is installed, or undefined (also when REWARDS_TEST_HIDE_TOOLS names it). */
export function toolPath(tool: OptionalTool): string | undefined {
  if (hidden(tool)) return undefined;
  return LOCATIONS[tool].paths.find((path) => existsSync(path));
}

/** `toolPath`, or an error naming the package (for helpers a test calls after its skip check). */
export function requireTool(tool: OptionalTool): string {
  const path = toolPath(tool);
  if (path === undefined) throw new Error(`${tool} is missing: ${installCommand([tool])}`);
  return path;
}

export function installCommand(tools: readonly OptionalTool[]): string {
  return `apt-get install -y ${[...new Set(tools.map(packageOf))].join(' ')}`;
}

/** One line of `<run dir>/skipped-tools.jsonl`: a test file that skipped for missing tools. */
export interface SkipRecord {
  file: string;
  tools: OptionalTool[];
}

export const SKIPPED_TOOLS_FILE = 'skipped-tools.jsonl';

/**
 * True when one of the tools is missing: the caller skips (`describe.skipIf(missingTools(…))`) and
 * the skip is recorded for the run's summary. Under CI=true a missing tool throws instead.
 */
export function missingTools(...tools: OptionalTool[]): boolean {
  const missing = tools.filter((tool) => toolPath(tool) === undefined);
  if (missing.length === 0) return false;
  const install = installCommand(missing);
  if (process.env.CI === 'true') {
    throw new Error(`${missing.join(', ')} missing under CI=true (${install}; .ci/run does)`);
  }
  const runDir = runDirOf(process.env.REWARDS_TEST_RUN_ID);
  const record: SkipRecord = { file: callingTestFile() ?? 'unknown', tools: missing };
  if (runDir !== undefined && existsSync(runDir)) {
    mkdirSync(runDir, { recursive: true });
    appendFileSync(join(runDir, SKIPPED_TOOLS_FILE), `${JSON.stringify(record)}\n`);
  } else {
    console.warn(`skipped: ${missing.join(', ')} not installed (${install})`);
  }
  return true;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The `*.test.ts` file that called, from the stack (relative to the repository). */
function callingTestFile(): string | undefined {
  const stack = new Error().stack ?? '';
  const match = /(?:file:\/\/)?(\/[^\s():?]+\.test\.ts)/.exec(stack);
  return match?.[1] === undefined ? undefined : relative(ROOT, match[1]);
}

/**
 * The run's one summary of skips for missing tools (empty when nothing was skipped), e.g.
 * "4 files skipped: pgbouncer, faketime not installed: apt-get install -y pgbouncer faketime".
 */
export function skippedToolsSummary(runDir: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(runDir, SKIPPED_TOOLS_FILE), 'utf8');
  } catch {
    return [];
  }
  const records = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SkipRecord);
  if (records.length === 0) return [];
  const files = [...new Set(records.map((record) => record.file))].sort();
  const tools = OPTIONAL_TOOLS.filter((tool) => records.some((record) => record.tools.includes(tool)));
  return [
    `${files.length} file${files.length === 1 ? '' : 's'} skipped tests: ${tools.join(', ')} not installed: ${installCommand(tools)}`,
    ...tools.map(
      (tool) =>
        `  ${tool} adds ${LOCATIONS[tool].adds}: ${files.filter((file) => records.some((record) => record.file === file && record.tools.includes(tool))).join(', ')}`,
    ),
  ];
}
