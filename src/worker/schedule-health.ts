/**
 * Whether a Job Scheduler will still produce its next job. BullMQ adds a scheduler's next
 * iteration when a worker takes the current one, in a second call; a Redis failover that loses
 * that call (or the delayed job itself) leaves the scheduler in Redis with nothing due, and the
 * schedule silently stops. Pure: the caller reads the scheduler and its next job's state.
 */
export type ScheduleHealth = 'missing' | 'stalled' | 'ok';

/** How long past its due time a next job may be absent before the chain counts as broken. */
export function stallGraceMs(everyMs: number): number {
  return Math.max(2 * everyMs, 10_000);
}

export function scheduleHealth(input: {
  /** The scheduler's `next` (ms) as Redis holds it; undefined when the scheduler is gone. */
  next: number | undefined;
  /** BullMQ's state of the job `repeat:<id>:<next>` ('unknown' when it does not exist). */
  nextJobState: string;
  everyMs: number;
  now: number;
}): ScheduleHealth {
  if (input.next === undefined) return 'missing';
  // Waiting behind a backlog, or delayed: the chain holds, however late.
  if (
    input.nextJobState === 'waiting' ||
    input.nextJobState === 'delayed' ||
    input.nextJobState === 'prioritized'
  ) {
    return 'ok';
  }
  if (input.nextJobState === 'waiting-children') return 'ok';
  // Active, finished or gone while `next` still points at it: the worker that took it never
  // added the iteration after (a worker between those two calls is milliseconds, not the grace).
  return input.now - input.next > stallGraceMs(input.everyMs) ? 'stalled' : 'ok';
}
