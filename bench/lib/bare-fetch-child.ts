// Entry of the bare fetch loop's child process (bench/checkins.ts, phase 2). The loop runs here as
// the pipeline does, compiled, on plain node, with the pipeline child's V8 flags, so that the two
// CPU figures compared differ only by what the pipeline does beyond HTTP and JSON.parse, not by
// heap settings or the tsx loader.

import { bareFetchWindows, type BareFetchOptions, type BareFetchResult } from './bare-fetch.js';
import { cpuSeconds, serveRpc, systemCpuSeconds } from './rpc.js';

export interface BareFetchChildResult extends BareFetchResult {
  cpuSeconds: number;
  /** The part of cpuSeconds spent in the kernel. */
  systemCpuSeconds: number;
}

serveRpc(
  {
    fetch: async (options: BareFetchOptions): Promise<BareFetchChildResult> => {
      const before = cpuSeconds();
      const systemBefore = systemCpuSeconds();
      const result = await bareFetchWindows(options);
      return {
        ...result,
        cpuSeconds: cpuSeconds() - before,
        systemCpuSeconds: systemCpuSeconds() - systemBefore,
      };
    },
    close: () => {
      setImmediate(() => process.exit(0));
    },
  },
  { pid: process.pid },
);
