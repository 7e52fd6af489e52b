// One BullMQ queue per kind of job, so each gets its own concurrency and its own depth in
// `status` and /metrics. Names are part of the Redis layout: change them only with a migration note.
export const QUEUES = {
  /** Plans check-in windows, runs the look-back, enqueues due windows. Scheduled. */
  checkinsPlan: 'checkins-plan',
  /** Pages one check-in window. Enqueued by the planner and by backfill/verify --repair. */
  checkinsWindow: 'checkins-window',
  /** One pass of a snapshot, payment-intent or alert stream. Scheduled, one scheduler per stream. */
  streams: 'streams',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
export const ALL_QUEUES: QueueName[] = Object.values(QUEUES);

/** Failed jobs are kept for inspection, within bounds; completed ones an hour (which also lets a
 * fixed job id, such as a catch-up pass, run at most once an hour). */
export const JOB_RETENTION = {
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 86_400, count: 5_000 },
} as const;
