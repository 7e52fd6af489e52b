import type { WorkerQueueRecord, WorkerRecord } from '../worker/worker-records.js';
import { formatCount, relativeTime } from './format.js';
import type { WorkersSummary } from './status-report.js';

// One row per worker process, the same on the terminal and the status page.

export interface WorkerRow {
  worker: string;
  started: string;
  jobsStarted: number;
  lastJob: string;
  /** `taking jobs`, or which queue worker is stuck and since when. */
  state: string;
  stuck: boolean;
}

/** How a queue worker is failing to take work, if it is: idle with jobs ready, or silent. */
function trouble(queue: WorkerQueueRecord): string | null {
  if (queue.idleWithWorkSeconds > 0)
    return `${queue.queue} idle ${queue.idleWithWorkSeconds} s with ${formatCount(queue.readyJobs ?? 0)} ready`;
  // A live idle loop fetches every ~10 s: say so only past that.
  if (queue.silentSeconds > 15) return `${queue.queue} no fetch for ${queue.silentSeconds} s`;
  return null;
}

export function workerRow(record: WorkerRecord, now: Date): WorkerRow {
  const lastJob = record.queues
    .map((queue) => queue.lastJobStartedAt)
    .filter((at): at is string => at !== null)
    .sort()
    .at(-1);
  const stuck = record.queues.filter((queue) => queue.stuck).map(trouble);
  const slow = record.queues.filter((queue) => !queue.stuck).map(trouble);
  const named = (list: Array<string | null>) =>
    list.filter((text): text is string => text !== null).join('; ');
  const state = record.stuck
    ? `STUCK: ${named(stuck)}; restarting`
    : named(slow) !== ''
      ? `${named(slow)} (limit ${record.idleTimeoutSeconds} s)`
      : 'taking jobs';
  return {
    worker: `${record.host}:${record.pid}${record.httpPort === undefined ? '' : ` (http ${record.httpPort})`}`,
    started: relativeTime(record.startedAt, now),
    jobsStarted: record.queues.reduce((sum, queue) => sum + queue.jobsStarted, 0),
    lastJob: relativeTime(lastJob ?? null, now),
    state,
    stuck: record.stuck,
  };
}

/** The line under the table: how many processes stopped reporting, or why nothing could be read. */
export function workersNote(workers: WorkersSummary): string {
  if (!workers.available) return `skipped: ${workers.reason}`;
  const live = `${formatCount(workers.live.length)} reporting`;
  return workers.gone > 0
    ? `${live}; ${formatCount(workers.gone)} stopped reporting (killed, or lost Redis)`
    : live;
}
