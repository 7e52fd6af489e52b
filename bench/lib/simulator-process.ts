import { fileURLToPath } from 'node:url';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import { forkRpcChild, type RpcChild } from './rpc.js';

export interface SimulatorOptionsJson {
  seed: number;
  checkIns: number;
  anchorMs: number;
  days: number;
}

export interface SimulatorReady {
  baseUrl: string;
  apiKey: string;
}

export interface ProcessUsage {
  cpuSeconds: number;
  rssBytes: number;
  maxRssBytes: number;
}

export interface SimulatorHandlers {
  [op: string]: (arg: never) => unknown;
  requests: (arg: null) => RequestLogEntry[];
  clearRequests: (arg: null) => void;
  freezeClockAt: (atMs: number) => void;
  setClock: (atMs: number) => void;
  liveTick: (arg: null) => { arrived: number; ended: number };
  usage: (arg: null) => ProcessUsage;
  close: (arg: null) => Promise<void>;
}

export interface SimulatorProcess extends SimulatorReady {
  pid: number;
  call: RpcChild<SimulatorHandlers>['call'];
  close(): Promise<void>;
}

/** The simulator in a child process, driven over IPC (request log, clock, live-mode steps). */
export async function startSimulatorProcess(
  options: SimulatorOptionsJson,
  env: NodeJS.ProcessEnv,
): Promise<SimulatorProcess> {
  const script = fileURLToPath(new URL('./simulator-child.ts', import.meta.url));
  const { child, ready } = await forkRpcChild<SimulatorHandlers, SimulatorReady>(script, {
    env,
    argv: [JSON.stringify(options)],
  });
  return {
    ...ready,
    pid: child.pid,
    call: (op, arg) => child.call(op, arg),
    async close() {
      await child.call('close', null).catch(() => undefined);
      await child.exited;
    },
  };
}
