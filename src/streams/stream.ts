import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { PipelineMetrics } from '../metrics.js';
import type { DB } from '../warehouse/schema.js';

// Stream names live in the registry; re-exported for the modules that only need the name type.
export { STREAM_NAMES, isStreamName, type StreamName } from './registry.js';

/** What a stream pass needs; the API client type stays generic here to keep this module free of I/O. */
export interface StreamDeps<Api> {
  db: Kysely<DB>;
  redis: Redis;
  api: Api;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics: PipelineMetrics;
  signal?: AbortSignal;
}

export interface PassOutcome {
  status: 'succeeded' | 'partial' | 'failed';
  rows: number;
  requests?: number;
  /** Shown in sync_runs.details and `status`: what a person needs to know about this pass. */
  details?: Record<string, unknown>;
  error?: string;
  /** One line per piece of work left undone (a failed window and why): `run` prints them and exits 1. */
  problems?: string[];
}
