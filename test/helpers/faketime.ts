import { requireTool } from './optional-tools.js';

/**
 * The environment that starts a process with its clock `offset` away from the host's, e.g. `+5m`
 * or `-5m` (Debian's libfaketime, preloaded; a test skips first through missingTools('faketime')).
 * Preloaded rather than through the `faketime` wrapper, which forks: a SIGKILL must reach the
 * process itself.
 */
export function fakeClockEnv(offset: string): Record<string, string> {
  return { LD_PRELOAD: requireTool('faketime'), FAKETIME: offset };
}
