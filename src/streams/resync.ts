import { setTimeout as sleep } from 'node:timers/promises';
import type { PartnerApi } from '../api/partner-api.js';
import { runStreamPass, type PassResult } from './passes.js';
import { STREAMS, type Pass } from './registry.js';
import type { StreamName } from '../sync/stream-facts.js';
import type { ResyncPassOptions, StreamDeps } from './stream.js';

// How each stream is re-synced is its definition's `resync` (registry.ts); this runs one.

/**
 * Re-syncs one stream under its stream lease (runStreamPass: one pass of a stream at a time across
 * every worker, `run` and `resync`; recorded in sync_runs). A lease another process holds is
 * waited for with `wait` (polled every `retryMs`), otherwise the result is `skipped` naming it.
 */
export async function runResync(
  deps: StreamDeps<PartnerApi>,
  stream: StreamName,
  options: ResyncPassOptions & { onWaiting?: (reason: string) => void },
): Promise<PassResult> {
  const definition = STREAMS[stream].resync;
  if ('unsupported' in definition) throw new Error(`${stream}: ${definition.unsupported}`);
  const resync = await definition.load();
  // Marked in sync_runs.details, so `status` and the history tell a re-sync from a scheduled pass.
  const pass: Pass = async (passDeps) => {
    const outcome = await resync(passDeps, options);
    return { ...outcome, details: { ...outcome.details, resync: true } };
  };
  for (;;) {
    const result = await runStreamPass(deps, stream, {}, pass);
    if (!options.wait || (result.status !== 'skipped' && result.status !== 'lease-lost')) return result;
    options.onWaiting?.(result.reason);
    await sleep(options.retryMs ?? 1_000, undefined, { signal: deps.signal });
  }
}
