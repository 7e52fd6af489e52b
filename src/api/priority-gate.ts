import PQueue from 'p-queue';

// In-process ordering of who asks the shared limiter next: one acquisition at a time per process,
// highest priority first, FIFO within a priority. p-queue enqueues synchronously, so a caller that
// called run() before the running task finished is always ranked when the next one is chosen
// (Bottleneck's local mode receives jobs through a timer first, so a high-priority caller could lose
// to an earlier normal one: priority was only likely; see docs/rate-limit.md). Cancellation: a
// waiting caller whose signal aborts leaves the queue at once and its task never runs.

export type RequestPriority = 'high' | 'normal' | 'low';

// p-queue runs the highest number first.
const QUEUE_PRIORITY: Record<RequestPriority, number> = { high: 2, normal: 1, low: 0 };

export class PriorityGate {
  readonly #queue = new PQueue({ concurrency: 1 });

  /** Runs `task` when every higher-priority (and earlier equal-priority) task has run. */
  async run<T>(
    priority: RequestPriority,
    signal: AbortSignal | undefined,
    task: () => Promise<T>,
  ): Promise<T> {
    signal?.throwIfAborted();
    const options = { priority: QUEUE_PRIORITY[priority], ...(signal === undefined ? {} : { signal }) };
    return this.#queue.add(task, options);
  }

  /** Callers queued behind the running task. */
  get waiting(): number {
    return this.#queue.size;
  }
}
