import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

// Servers a test starts (a throw-away PostgreSQL, a redis-server, a Cluster or Sentinel group) live
// in a temp dir of their own. Two guards make sure they never outlive the test process:
// - an exit hook runs each dir's `stopNow` (kill the servers, remove the dir) on a normal exit or
//   an uncaught error;
// - a detached watcher (a shell loop on this process's pid) does the same after a SIGKILL, reading
//   the servers' pids from files in the dir. It exits by itself once the dir is gone (a normal stop).

const owned = new Map<string, () => void>();
process.once('exit', () => {
  for (const stopNow of owned.values()) stopNow();
});

export interface ServerDirGuard {
  /** The servers in `dir` are stopped and the dir removed: the exit hook forgets it (the watcher sees the dir go). */
  release(): void;
}

/**
 * Guards `dir`. `pidFiles` are shell globs relative to it whose first line is a server's pid;
 * the watcher sends `signal` to each (SIGQUIT is PostgreSQL's immediate shutdown, which ends its
 * backends), then SIGKILL 2 s later, then removes the dir.
 */
export function guardServerDir(
  dir: string,
  options: { stopNow: () => void; pidFiles: string[]; signal?: 'QUIT' | 'KILL' },
): ServerDirGuard {
  owned.set(dir, () => {
    options.stopNow();
    rmSync(dir, { recursive: true, force: true });
  });
  startWatcher(dir, options.pidFiles, options.signal ?? 'KILL');
  return { release: () => void owned.delete(dir) };
}

/** Whether `dir` is guarded by this process (a dir another process is making has no guard here). */
export function isGuardedHere(dir: string): boolean {
  return owned.has(dir);
}

function startWatcher(dir: string, pidFiles: string[], signal: 'QUIT' | 'KILL'): void {
  const files = pidFiles.map((glob) => `"${dir}"/${glob}`).join(' ');
  const signalAll = (name: string) =>
    `for f in ${files}; do pid=$(head -n 1 "$f" 2>/dev/null); if [ -n "$pid" ]; then kill -${name} "$pid" 2>/dev/null; fi; done`;
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null && [ -d "${dir}" ]; do sleep 1; done`,
    `[ -d "${dir}" ] || exit 0`,
    signalAll(signal),
    ...(signal === 'KILL' ? [] : ['sleep 2', signalAll('KILL')]),
    `rm -rf "${dir}"`,
  ].join('\n');
  const watcher = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  watcher.unref();
}
