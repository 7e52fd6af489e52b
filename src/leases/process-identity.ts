import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** How a lease names its holder, and how a process tells whether another process of its host is gone. */
export interface ProcessIdentity {
  /** For people (status, logs, the leases table): host/pid. */
  holder: string;
  /**
   * The kernel boot and pid namespace this process runs in (Linux), or null elsewhere. Two
   * processes with the same key see the same pids, so one can check whether the other still exists.
   */
  hostKey: string | null;
  pid: number;
}

export function currentProcess(): ProcessIdentity {
  return { holder: `${hostname()}/${process.pid}`, hostKey: linuxHostKey(), pid: process.pid };
}

function linuxHostKey(): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const namespace = readlinkSync('/proc/self/ns/pid');
    return boot === '' ? null : `${boot}/${namespace}`;
  } catch {
    return null;
  }
}

/**
 * Whether a holder recorded with `hostKey`/`pid` is a process of this host that no longer exists.
 * False whenever that cannot be told (another host or namespace, no key, a pid in use again, our
 * own pid): then its lease simply expires.
 */
export function holderIsGone(
  self: ProcessIdentity,
  holder: { hostKey: string | null; pid: number | null },
): boolean {
  if (self.hostKey === null || holder.hostKey !== self.hostKey || holder.pid === null) return false;
  if (holder.pid === self.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false; // it exists (or its pid was reused: wait for the expiry)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
