// Is a queue worker silently idle? Pure: fed one observation at a time by the liveness watchdog.
//
// After a Redis failover a BullMQ Worker can keep "running" while it takes nothing: its fetch loop
// hangs on a dead connection (seen on a Cluster failover: the blocking connection to the new
// primary opened, then never sent another BZPOPMIN), it logs nothing, and the process looks
// healthy. Two symptoms, whatever the cause, each held for the idle timeout:
//
// - silent: it has a free slot and has neither fetched (a BZPOPMIN wait ended by a MOVE-TO-ACTIVE
//   round trip, at least every ~11 s when idle) nor started a job. Other workers may be serving
//   the queue meanwhile, so this is what catches a worker the queue does not miss yet;
// - idle with work: it has a free slot, jobs are ready in its queue, and it starts none of them.
//
// Anything else restarts the clocks: progress, no room (every slot busy), and above all a queue the
// watchdog could not read (Redis down is not the worker's fault, and after an outage every worker
// gets a full timeout again; restarting workers through a long outage would only exhaust the
// supervisor's restart budget).

export interface QueueObservation {
  atMs: number;
  /** Jobs this process's worker of the queue is running now. */
  active: number;
  concurrency: number;
  /** Jobs ready to run (waiting, prioritized, delayed and overdue); null when the queue was unreadable. */
  readyJobs: number | null;
  /** Jobs this process's worker of the queue has started since it began (a counter). */
  jobsStarted: number;
  /** Fetch round trips its loop has completed since it began (a counter). */
  fetches: number;
}

export interface QueueWatch {
  /** Since when the worker has had room and ready jobs without starting one; null when it has not. */
  idleWithWorkSinceMs: number | null;
  jobsStartedAtMark: number;
  /** Since when the worker has had room without fetching or starting anything; null when it has not. */
  silentSinceMs: number | null;
  progressAtMark: number;
}

export interface QueueVerdict {
  watch: QueueWatch;
  /** How long it has had room and ready jobs without starting one (0 when it has not). */
  idleWithWorkMs: number;
  /** How long it has had room without any progress (0 when it has not). */
  silentMs: number;
  stuck: boolean;
}

export const FRESH_WATCH: QueueWatch = {
  idleWithWorkSinceMs: null,
  jobsStartedAtMark: 0,
  silentSinceMs: null,
  progressAtMark: 0,
};

export function watchQueue(
  previous: QueueWatch,
  observation: QueueObservation,
  idleTimeoutMs: number,
): QueueVerdict {
  const { atMs, active, concurrency, readyJobs, jobsStarted, fetches } = observation;
  const progress = jobsStarted + fetches;
  if (readyJobs === null || active >= concurrency) {
    return {
      watch: {
        idleWithWorkSinceMs: null,
        jobsStartedAtMark: jobsStarted,
        silentSinceMs: null,
        progressAtMark: progress,
      },
      idleWithWorkMs: 0,
      silentMs: 0,
      stuck: false,
    };
  }
  // Progress seen since the last look proves the worker alive until then: count from now.
  const silentSince =
    previous.silentSinceMs === null || progress > previous.progressAtMark ? atMs : previous.silentSinceMs;
  const idleWithWorkSince =
    readyJobs === 0
      ? null
      : previous.idleWithWorkSinceMs === null || jobsStarted > previous.jobsStartedAtMark
        ? atMs
        : previous.idleWithWorkSinceMs;
  const silentMs = atMs - silentSince;
  const idleWithWorkMs = idleWithWorkSince === null ? 0 : atMs - idleWithWorkSince;
  return {
    watch: {
      idleWithWorkSinceMs: idleWithWorkSince,
      jobsStartedAtMark: jobsStarted,
      silentSinceMs: silentSince,
      progressAtMark: progress,
    },
    idleWithWorkMs,
    silentMs,
    stuck: idleWithWorkMs >= idleTimeoutMs || silentMs >= idleTimeoutMs,
  };
}
