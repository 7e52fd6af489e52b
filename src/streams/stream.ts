import type { Kysely } from 'kysely';
import type { AlertDeliverySlots } from '../alerts/delivery-slots.js';
import type { RedisClient } from '../redis/connection.js';
import type { Clock } from '../clock.js';
import type { Config, OAuthConfig } from '../config/config.js';
import type { LeaseOptions } from '../leases/with-lease.js';
import type { Logger } from '../log.js';
import type { PipelineMetrics } from '../metrics.js';
import type { DB } from '../warehouse/schema.js';

import type { ResyncProgress, ResyncRange } from '../sync/resync-plan.js';
import type { StreamName } from '../sync/stream-facts.js';

/** What a stream pass needs; the API client type stays generic here to keep this module free of I/O. */
export interface StreamDeps<Api> {
  db: Kysely<DB>;
  redis: RedisClient;
  api: Api;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics: PipelineMetrics;
  /** The process's one limiter for alert POSTs, and its background deliveries. */
  alertDeliveries: AlertDeliverySlots;
  signal?: AbortSignal;
}

/** How the work of these deps takes a lease: LEASE_TTL, aborted on shutdown, logged by their logger. */
export function leaseOptionsOf(
  deps: Pick<StreamDeps<unknown>, 'config' | 'signal' | 'logger'>,
): LeaseOptions {
  return { ttlMs: deps.config.leases.ttlMs, signal: deps.signal, logger: deps.logger };
}

/**
 * The OAuth settings of a pass that reads with OAuth: the worker and `run` never start such a pass
 * without them (streamEnabled, registry.ts), so their absence here is a programming error. A pass
 * asks here rather than the registry's oauthOf, which would make it import the registry that loads it.
 */
export function oauthSettingsOf(config: Pick<Config, 'oauth'>, stream: StreamName): OAuthConfig {
  if (config.oauth === undefined) throw new Error(`${stream} needs OAuth, which is not configured`);
  return config.oauth;
}

/** How a snapshot pass (restaurants, challenges) treats what the warehouse already holds. */
export interface SnapshotPassOptions {
  /**
   * `resync` (docs/resync.md): compare each record with its stored version's raw record rehashed by
   * today's rules, not with the stored `content_hash`, so no stored hash can hide a change.
   */
  recheckStoredVersions?: boolean;
  /** `resync`: read every record, whether or not the adaptive cadence has it due (docs/freshness.md). */
  everyRecord?: boolean;
}

/**
 * What a pass found that calls for another stream's pass at once: the registry's `followUps`
 * (registry.ts) read these, never `details`, which is for people.
 */
export interface FollowUpSignals {
  /** Restaurants this pass saw for the first time: their challenges are to be read. */
  newRestaurants?: number;
  /** Locations the check-in feed named whose full form was never read (the planner's tick). */
  locationsNeverRefreshed?: number;
}

export interface PassOutcome {
  status: 'succeeded' | 'partial' | 'failed';
  rows: number;
  requests?: number;
  /** Shown in sync_runs.details and `status`: what a person needs to know about this pass. */
  details?: Record<string, unknown>;
  /** What the worker acts on after the pass (not stored; registry.ts's followUps). */
  followUps?: FollowUpSignals;
  error?: string;
  /** One line per piece of work left undone (a failed window and why): `run` prints them and exits 1. */
  problems?: string[];
}

/** What a re-sync is given (`resync`, src/streams/resync.ts). */
export interface ResyncPassOptions {
  range: ResyncRange;
  /** Wait for leases other processes hold instead of reporting the work as left behind. */
  wait: boolean;
  progress?: ResyncProgress | undefined;
  /** Pause between two tries of a lease another process holds (tests shorten it). */
  retryMs?: number;
}

/** How one stream is re-synced: a pass that ignores the stream's short-cuts (a stream's `resync`). */
export interface ResyncDefinition<Api> {
  /** Whether `--from`/`--to` narrow it (otherwise the whole stream is read). */
  usesRange: boolean;
  /** What the re-sync does, in a phrase (`resync --help`, docs/resync.md). */
  what: string;
  load(): Promise<(deps: StreamDeps<Api>, options: ResyncPassOptions) => Promise<PassOutcome>>;
}
