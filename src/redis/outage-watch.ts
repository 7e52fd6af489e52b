// Has a process been cut off from Redis, making no progress, for too long? Pure: fed one
// observation at a time by the worker's liveness watchdog (src/worker/liveness.ts).
//
// The idle watch (src/worker/idle-watch.ts) deliberately forgives a queue it cannot read: Redis down
// is not the worker's fault. But a client that stays cut off while the servers are back (a dead
// connection after a failover, issue 38) looks the same from inside, and waiting for ever helps
// nobody. So: Redis unreachable and no job started or fetched for WORKER_REDIS_UNREACHABLE_TIMEOUT
// is a verdict of its own, and the worker exits 1 for its supervisor to start a fresh one (a fresh
// process with fresh connections; if Redis really is down, it waits again, just as long).

export interface OutageObservation {
  atMs: number;
  /** Whether Redis answered this look (any queue read, through the watchdog's own connection). */
  reachable: boolean;
  /** Jobs started plus fetches completed by the process's queue workers (a counter). */
  progress: number;
}

export interface OutageWatch {
  /** Since when Redis has been unreachable with no progress; null when it has not. */
  stalledSinceMs: number | null;
  progressAtMark: number;
}

export interface OutageVerdict {
  watch: OutageWatch;
  /** How long Redis has been unreachable with no progress (0 when it has not). */
  stalledMs: number;
  stuck: boolean;
}

export const FRESH_OUTAGE_WATCH: OutageWatch = { stalledSinceMs: null, progressAtMark: 0 };

export function watchRedisOutage(
  previous: OutageWatch,
  observation: OutageObservation,
  timeoutMs: number,
): OutageVerdict {
  const { atMs, reachable, progress } = observation;
  if (reachable) {
    return { watch: { stalledSinceMs: null, progressAtMark: progress }, stalledMs: 0, stuck: false };
  }
  // Progress seen since the last look proves the process alive until then: count from now.
  const progressed = progress > previous.progressAtMark;
  const since = previous.stalledSinceMs === null || progressed ? atMs : previous.stalledSinceMs;
  const stalledMs = atMs - since;
  return {
    watch: { stalledSinceMs: since, progressAtMark: progress },
    stalledMs,
    stuck: stalledMs >= timeoutMs,
  };
}
