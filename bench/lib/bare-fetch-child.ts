// Entry of the bare fetch loop's child process (bench/checkins.ts, phase 2). The loop runs here,
// compiled and on plain node with the V8 flags the pipeline child gets, so that the two CPU figures
// compared differ only by what the pipeline does beyond HTTP and JSON.parse: the heap policy
// (src/runtime/heap-policy.ts) also makes JSON.parse's garbage dearer to collect, and in the
// bench's own process (tsx, V8's defaults) the floor was measured without that cost.

import { bareFetchWindows, type BareFetchOptions, type BareFetchResult } from './bare-fetch.js';
import { cpuSeconds, serveRpc, systemCpuSeconds } from './rpc.js';

export interface BareFetchChildResult extends BareFetchResult {
  cpuSeconds: number;
  /** The part of cpuSeconds spent in the kernel. */
  systemCpuSeconds: number;
  peakRssBytes: number;
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
        peakRssBytes: process.resourceUsage().maxRSS * 1024,
      };
    },
    close: () => {
      setImmediate(() => process.exit(0));
    },
  },
  { pid: process.pid },
);
