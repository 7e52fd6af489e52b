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

/**
 * BullMQ runs every job once: one retry layer per failure (docs/rate-limit.md#retries-one-layer-per-failure).
 * One HTTP request is retried by p-retry; a failed window or alert keeps its own backoff in Postgres and
 * is re-read when due; a crashed worker's job comes back through stalled-job recovery; a job that must
 * wait throws `TryLaterError`. Never raise this: attempts would multiply the layers below.
 */
export const JOB_ATTEMPTS = 1;

/** What every job the project enqueues or schedules is given. */
export const JOB_OPTIONS = { ...JOB_RETENTION, attempts: JOB_ATTEMPTS } as const;
