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
