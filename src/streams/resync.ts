import { setTimeout as sleep } from 'node:timers/promises';
import type { PartnerApi } from '../api/partner-api.js';
import type { ResyncProgress, ResyncRange } from '../sync/resync-plan.js';
import { runStreamPass, type PassResult } from './passes.js';
import type { Pass } from './registry.js';
import type { StreamName } from './stream-names.js';
import type { StreamDeps } from './stream.js';

export interface ResyncPassOptions {
  range: ResyncRange;
  /** Wait for leases other processes hold instead of reporting the work as left behind. */
  wait: boolean;
  progress?: ResyncProgress | undefined;
  /** Pause between two tries of a lease another process holds (tests shorten it). */
  retryMs?: number;
}

/** How one stream is re-synced: a pass that ignores the stream's short-cuts. */
export interface ResyncDefinition {
  /** Whether `--from`/`--to` narrow it (otherwise the whole stream is read). */
  usesRange: boolean;
  /** What the re-sync does, in a phrase (`resync --help`, docs/resync.md). */
  what: string;
  load(): Promise<(deps: StreamDeps<PartnerApi>, options: ResyncPassOptions) => ReturnType<Pass>>;
}

/**
 * One entry per stream of the registry (the type requires it, so a new stream must say how it is
 * re-synced); `unsupported`, with the reason, for a stream that reads nothing from the partner API.
 */
export const RESYNCS: Record<StreamName, ResyncDefinition | { unsupported: string }> = {
  restaurants: {
    usesRange: false,
    what: 'the whole list, every version compared by content (stored hashes recomputed)',
    load: async () => {
      const { runRestaurantsPass } = await import('./restaurants.js');
      return (deps) => runRestaurantsPass(deps, { recheckStoredVersions: true });
    },
  },
  checkins: {
    usesRange: true,
    what: 'every window of the range re-paged from its first page, whatever its state',
    load: async () => {
      const { resyncCheckins } = await import('./checkins/resync.js');
      return (deps, options) =>
        resyncCheckins(deps, {
          range: options.range,
          wait: options.wait,
          progress: options.progress,
          ...(options.retryMs === undefined ? {} : { lockedRetryMs: options.retryMs }),
        });
    },
  },
  locations: {
    usesRange: false,
    what: 'the full form and open hours of every known location, not only those due within the budget',
    load: async () => {
      const { runLocationsPass } = await import('./locations.js');
      const { countLocations } = await import('../warehouse/locations.js');
      return async (deps, options) => {
        const { total } = await countLocations(deps.db);
        options.progress?.({ done: 0, total, unit: 'locations' });
        return runLocationsPass(deps, { everyRecord: true });
      };
    },
  },
  challenges: {
    usesRange: false,
    what: "every live restaurant's challenge list, every version compared by content (stored hashes recomputed)",
    load: async () => {
      const { runChallengesPass } = await import('./challenges.js');
      return (deps) => runChallengesPass(deps, { recheckStoredVersions: true, everyRecord: true });
    },
  },
  balance: {
    usesRange: false,
    what: 'one read of the app wallet balance (it has no short-cut to ignore)',
    load: async () => (await import('./balance.js')).runBalancePass,
  },
  payment_intents: {
    usesRange: true,
    what: 'the full form of every stored intent created in the range, changes through the transition ledger',
    load: async () => (await import('./payment-intents/resync.js')).resyncPaymentIntents,
  },
  alerts: {
    unsupported:
      'alerts reads nothing from the partner API (undelivered alerts are retried by the alerts pass); nothing to re-sync',
  },
  members: {
    usesRange: false,
    what: "every active connection, each member's visits read from the top to the last page",
    load: async () => {
      const { runMembersPass } = await import('./members.js');
      return (deps) => runMembersPass(deps, { fromTheTop: true });
    },
  },
};

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
  const definition = RESYNCS[stream];
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
