// Entry of the pipeline's child process: one full check-in backfill (runCheckinsPass from an
// empty warehouse) assembled exactly as the worker does (createPipelineRuntime), with its
// resident memory sampled while it runs. The configuration comes from the environment the
// bench passes, through loadConfig like every other entry point.

import { loadConfig } from '../../src/config/config.js';
import { secretValues } from '../../src/config/secret-values.js';
import { createLogger } from '../../src/log.js';
import { createPipelineRuntime } from '../../src/runtime/pipeline.js';
import { runCheckinsPass } from '../../src/streams/checkins/pass.js';
import { installIoProbe, type IoTotals } from './io-probe.js';
import { startPromotedProfile } from './promoted-profile.js';
import { cpuSeconds, serveRpc, systemCpuSeconds } from './rpc.js';

export interface BackfillResult {
  status: string;
  rows: number;
  requests: number;
  details: Record<string, unknown>;
  elapsedMs: number;
  cpuSeconds: number;
  /** The part of cpuSeconds spent in the kernel. */
  systemCpuSeconds: number;
  /** RSS after the runtime is assembled, before the pass. */
  baselineRssBytes: number;
  /** Highest of the RSS samples (every 50 ms) taken during the pass. */
  peakRssBytes: number;
  /** The kernel's high-water mark for the whole process life (getrusage ru_maxrss). */
  maxRssBytes: number;
  heapUsedPeakBytes: number;
  /** Calls to Postgres and Redis during the pass, and the time spent waiting for them. */
  io: IoTotals;
}

// process.memoryUsage.rss() reads one number from the OS; process.memoryUsage() also walks V8's
// heap spaces, which at every 20 ms cost the pass 0.35 CPU-s (issue 39). The heap is sampled
// once a second.
const RSS_SAMPLE_MS = 50;
const HEAP_EVERY = 20;

const io = installIoProbe();
const config = loadConfig(process.env);
const logger = createLogger({ level: config.logLevel, secrets: secretValues(config), pretty: false });
const runtime = createPipelineRuntime({ config, logger, applicationName: 'rewards-etl-bench' });

async function backfill(): Promise<BackfillResult> {
  const baselineRssBytes = process.memoryUsage().rss;
  let peakRssBytes = baselineRssBytes;
  let heapUsedPeakBytes = 0;
  let ticks = 0;
  const sample = () => {
    peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss());
    if (ticks++ % HEAP_EVERY === 0)
      heapUsedPeakBytes = Math.max(heapUsedPeakBytes, process.memoryUsage().heapUsed);
  };
  const sampler = setInterval(sample, RSS_SAMPLE_MS);
  const promoted = process.env['BENCH_PROMOTED_PROFILE_DIR']
    ? await startPromotedProfile(process.env['BENCH_PROMOTED_PROFILE_DIR'])
    : null;
  const ioBefore = { ...io };
  const cpuBefore = cpuSeconds();
  const systemBefore = systemCpuSeconds();
  const started = performance.now();
  try {
    const outcome = await runCheckinsPass(runtime.deps);
    const elapsedMs = performance.now() - started;
    sample();
    if (promoted !== null) {
      const { path, topSites } = await promoted.stop();
      process.stderr.write(`[bench checkins] promoted objects (${path}):\n${topSites.join('\n')}\n`);
    }
    return {
      status: outcome.status,
      rows: outcome.rows,
      requests: outcome.requests ?? 0,
      details: {
        ...(outcome.details ?? {}),
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      },
      elapsedMs,
      cpuSeconds: cpuSeconds() - cpuBefore,
      systemCpuSeconds: systemCpuSeconds() - systemBefore,
      baselineRssBytes,
      peakRssBytes,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      heapUsedPeakBytes,
      io: {
        postgresQueries: io.postgresQueries - ioBefore.postgresQueries,
        postgresCommits: io.postgresCommits - ioBefore.postgresCommits,
        postgresMs: io.postgresMs - ioBefore.postgresMs,
        redisCommands: io.redisCommands - ioBefore.redisCommands,
        redisMs: io.redisMs - ioBefore.redisMs,
      },
    };
  } finally {
    clearInterval(sampler);
  }
}

serveRpc(
  {
    backfill,
    close: async () => {
      await runtime.close();
      setImmediate(() => process.exit(0));
    },
  },
  { pid: process.pid },
);
