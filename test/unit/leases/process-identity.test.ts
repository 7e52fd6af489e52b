import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { currentProcess, holderIsGone } from '../../../src/leases/process-identity.js';

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('whether a lease holder of this host is gone', () => {
  const self = currentProcess();

  it('names this process host/pid and, on Linux, its boot and pid namespace', () => {
    expect(self.holder).toMatch(new RegExp(`/${process.pid}$`));
    if (process.platform === 'linux') expect(self.hostKey).toMatch(/^[0-9a-f-]+\/pid:\[\d+\]$/);
  });

  it('a process of this host that exited is gone; a live one, this one, or one of another host is not', async () => {
    if (self.hostKey === null) return; // not Linux: never judged gone, leases expire instead
    expect(holderIsGone(self, { hostKey: self.hostKey, pid: await deadPid() })).toBe(true);
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)']);
    try {
      expect(holderIsGone(self, { hostKey: self.hostKey, pid: live.pid! })).toBe(false);
    } finally {
      live.kill();
    }
    expect(holderIsGone(self, { hostKey: self.hostKey, pid: process.pid })).toBe(false);
    expect(holderIsGone(self, { hostKey: 'another-boot/pid:[1]', pid: await deadPid() })).toBe(false);
    expect(holderIsGone(self, { hostKey: null, pid: await deadPid() })).toBe(false);
    expect(holderIsGone({ ...self, hostKey: null }, { hostKey: self.hostKey, pid: await deadPid() })).toBe(
      false,
    );
  });
});
