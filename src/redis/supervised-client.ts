import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../log.js';

// A closed client is never silent. ioredis ends a client for good (status `end`, every queued
// command rejected or left waiting) in a few situations it considers final: a Sentinel search cut
// short (see failover-safe-sentinel-connector.ts), a retry strategy that returns no delay, a
// connect() that failed. Our holders (BullMQ's queues, workers and their blocking connections, the
// shared limiter, the leases' helpers) keep the same client object for the life of the process, so
// an `end` nobody asked for means work that stops without a word. Every long-lived client the
// factory builds, and every copy BullMQ makes of one with duplicate(), is watched: such an `end`
// reconnects the same object (what BullMQ itself does to its blocking connection), with one log
// line naming the connection; a client that keeps ending is declared lost (one line, and the
// process exits 1 so its supervisor starts a fresh one).

type AnyClient = Redis | Cluster;

/** How many unrequested ends a connection may rebuild from within a period before it is lost. */
export interface RebuildPolicy {
  maxRebuilds: number;
  periodMs: number;
}

export const DEFAULT_REBUILD_POLICY: RebuildPolicy = { maxRebuilds: 5, periodMs: 10 * 60_000 };

export type EndDecision =
  { action: 'rebuild'; rebuilds: number[] } | { action: 'give-up'; rebuilds: number[] };

/**
 * What to do about an `end` nobody asked for, given the instants of the previous rebuilds. Pure.
 * Rebuilding is cheap and a failover may end a client more than once; one that ends over and over
 * again cannot be helped from inside the process.
 */
export function decideAfterEnd(
  previous: readonly number[],
  nowMs: number,
  policy: RebuildPolicy = DEFAULT_REBUILD_POLICY,
): EndDecision {
  const recent = previous.filter((at) => nowMs - at < policy.periodMs);
  if (recent.length >= policy.maxRebuilds) return { action: 'give-up', rebuilds: recent };
  return { action: 'rebuild', rebuilds: [...recent, nowMs] };
}

export interface SupervisionOptions {
  /** Names the connection in log lines: "worker queues", "worker queues/blocking", … */
  name: string;
  logger?: Logger | undefined;
  /** A connection that cannot be rebuilt; by default the process exits 1 (after the log line). */
  onLost?: ((name: string) => void) | undefined;
  policy?: RebuildPolicy | undefined;
  now?: () => number;
}

/**
 * Watches `client` (and the copies duplicate() makes) for an `end` not requested through its own
 * disconnect()/quit(). Returns the same object.
 */
export function superviseClient<T extends AnyClient>(client: T, options: SupervisionOptions): T {
  const now = options.now ?? Date.now;
  const policy = options.policy ?? DEFAULT_REBUILD_POLICY;
  const onLost = options.onLost ?? exitProcess(options.logger);
  const closing = watchCloseRequests(client, options);
  let rebuilds: number[] = [];
  let lost = false;

  client.on('end', () => {
    if (closing.requested() || lost) return;
    const decision = decideAfterEnd(rebuilds, now(), policy);
    rebuilds = decision.rebuilds;
    if (decision.action === 'give-up') {
      lost = true;
      options.logger?.error(
        { redisClient: options.name, rebuilds: rebuilds.length, periodMs: policy.periodMs },
        `redis connection "${options.name}" ended again and cannot be rebuilt; exiting with status 1 so the supervisor starts a fresh process`,
      );
      onLost(options.name);
      return;
    }
    options.logger?.warn(
      { redisClient: options.name, rebuild: rebuilds.length },
      `redis connection "${options.name}" ended; rebuilding`,
    );
    // The same object reconnects, so every holder of it carries on. A concurrent connect() by its
    // holder (BullMQ's reconnect) rejects with "already connecting": that is the same outcome.
    setImmediate(() => {
      if (closing.requested() || client.status !== 'end') return;
      client.connect().catch((error: unknown) => {
        options.logger?.debug({ err: error, redisClient: options.name }, 'redis rebuild: connect failed');
      });
    });
  });
  return client;
}

/**
 * Marks the client's own disconnect()/quit() as requested closes, a connect() as reopening it, and
 * supervises every copy duplicate() makes.
 */
function watchCloseRequests(client: AnyClient, options: SupervisionOptions): { requested(): boolean } {
  let closeRequested = false;
  const methods = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  const wrap = (method: string, before: (args: unknown[]) => void) => {
    const original = methods[method];
    if (typeof original !== 'function') return;
    methods[method] = function (this: unknown, ...args: unknown[]) {
      before(args);
      return original.apply(this, args);
    };
  };
  // disconnect(true) is ioredis's "reconnect": not a close.
  wrap('disconnect', (args) => {
    if (args[0] !== true) closeRequested = true;
  });
  wrap('quit', () => {
    closeRequested = true;
  });
  // A holder's own connect() (BullMQ reconnecting its blocking client after closing it) reopens it.
  wrap('connect', () => {
    closeRequested = false;
  });
  let copies = 0;
  const duplicate = methods.duplicate;
  if (typeof duplicate === 'function') {
    methods.duplicate = function (this: unknown, ...args: unknown[]) {
      const copy = duplicate.apply(this, args) as AnyClient;
      const role = namedByBullmq(args) ? 'blocking' : `copy ${++copies}`;
      return superviseClient(copy, { ...options, name: `${options.name}/${role}` });
    };
  }
  return { requested: () => closeRequested };
}

/** BullMQ names its blocking connection when it duplicates ours (Redis or Cluster form). */
function namedByBullmq(args: unknown[]): boolean {
  const has = (value: unknown): boolean =>
    typeof value === 'object' && value !== null && 'connectionName' in value;
  const second = args[1] as { redisOptions?: unknown } | undefined;
  return has(args[0]) || has(second?.redisOptions);
}

function exitProcess(logger: Logger | undefined): (name: string) => void {
  return () => {
    process.exitCode = 1;
    // The log line first (pino writes asynchronously), then the exit even if a socket holds the loop.
    const exit = () => process.exit(1);
    if (logger !== undefined) logger.flush(() => setTimeout(exit, 50));
    else setTimeout(exit, 50);
  };
}
