// What each worker process says about itself, kept in one Redis hash under the project's key
// prefix (so it shares the Cluster hash tag): field = worker id, value = the JSON record below,
// refreshed every few seconds by the liveness watchdog. `status`, /status.json and the status page
// read it; a record not refreshed for a while belongs to a process that is gone.

export interface WorkerQueueRecord {
  queue: string;
  concurrency: number;
  active: number;
  jobsStarted: number;
  lastJobStartedAt: string | null;
  /** When its fetch loop last completed a round trip (a live idle loop does every ~10 s). */
  lastFetchAt: string | null;
  /** Ready jobs in the queue at the last check; null when it could not be read. */
  readyJobs: number | null;
  /** How long this worker has had room and ready jobs without starting one. */
  idleWithWorkSeconds: number;
  /** How long this worker has had room without fetching or starting anything. */
  silentSeconds: number;
  stuck: boolean;
}

export interface WorkerRecord {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  /** When the record was last written (the writer's clock). */
  seenAt: string;
  idleTimeoutSeconds: number;
  /** The port its /healthz, /metrics and status page listen on (HTTP_PORT=0: the one picked). */
  httpPort?: number;
  /** A queue worker is stuck: the process exits for its supervisor to restart it. */
  stuck: boolean;
  queues: WorkerQueueRecord[];
}

export function workersKey(prefix: string): string {
  return `${prefix}:workers`;
}

/** A record older than this is a process that stopped writing (killed, or its Redis connection dead). */
export const RECORD_STALE_MS = 30_000;

/** Parsed records, newest first; unparseable fields are skipped (another version may write more). */
export function parseWorkerRecords(hash: Record<string, string>): WorkerRecord[] {
  const records: WorkerRecord[] = [];
  for (const text of Object.values(hash)) {
    try {
      const value = JSON.parse(text) as Partial<WorkerRecord>;
      if (typeof value.id === 'string' && typeof value.seenAt === 'string' && Array.isArray(value.queues))
        records.push(value as WorkerRecord);
    } catch {
      // not ours, or truncated: ignore
    }
  }
  return records.sort((a, b) => b.seenAt.localeCompare(a.seenAt));
}

/** Live = written within RECORD_STALE_MS of `nowMs`. */
export function splitByFreshness(
  records: readonly WorkerRecord[],
  nowMs: number,
): { live: WorkerRecord[]; gone: WorkerRecord[] } {
  const live: WorkerRecord[] = [];
  const gone: WorkerRecord[] = [];
  for (const record of records) {
    (nowMs - Date.parse(record.seenAt) <= RECORD_STALE_MS ? live : gone).push(record);
  }
  return { live, gone };
}
