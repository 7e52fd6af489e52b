import { existsSync } from 'node:fs';

const CANDIDATES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];

/**
 * The environment that starts a process with its clock `offset` away from the host's, e.g. `+5m`
 * or `-5m` (Debian's libfaketime, preloaded; `.ci/run` installs the package). Preloaded rather than
 * through the `faketime` wrapper, which forks: a SIGKILL must reach the process itself.
 */
export function fakeClockEnv(offset: string): Record<string, string> {
  const library = CANDIDATES.find((path) => existsSync(path));
  if (library === undefined) {
    throw new Error('libfaketime is missing: apt-get install faketime (.ci/run does)');
  }
  return { LD_PRELOAD: library, FAKETIME: offset };
}
