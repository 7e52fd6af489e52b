import { existsSync } from 'node:fs';

// Debian tools some tests need (stand-in for the shared helper i37 writes; same API). Outside CI a
// missing tool skips its tests, saying so; under CI=true it fails them, naming the package.

export type OptionalTool = 'pgbouncer' | 'faketime' | 'chromium' | 'promtool';

const LOCATIONS: Record<OptionalTool, { paths: string[]; apt: string }> = {
  pgbouncer: { paths: ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'], apt: 'pgbouncer' },
  faketime: {
    paths: [
      '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
      '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
    ],
    apt: 'faketime',
  },
  chromium: { paths: ['/usr/bin/chromium'], apt: 'chromium' },
  promtool: { paths: ['/usr/bin/promtool'], apt: 'prometheus' },
};

/** Where the tool is installed, or undefined. */
export function toolPath(tool: OptionalTool): string | undefined {
  return LOCATIONS[tool].paths.find((path) => existsSync(path));
}

/** True when one of the tools is missing (outside CI: skip; under CI=true this throws instead). */
export function missingTools(...tools: OptionalTool[]): boolean {
  const missing = tools.filter((tool) => toolPath(tool) === undefined);
  if (missing.length === 0) return false;
  const install = `apt-get install -y ${missing.map((tool) => LOCATIONS[tool].apt).join(' ')}`;
  if (process.env.CI === 'true') throw new Error(`missing under CI: ${missing.join(', ')} (${install})`);
  console.warn(`skipped: ${missing.join(', ')} missing (${install})`);
  return true;
}
