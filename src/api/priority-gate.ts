import Bottleneck from 'bottleneck';

// In-process ordering of who asks the shared limiter next: one acquisition at a time per process,
// highest priority first, FIFO within a priority. Bottleneck's local mode does exactly this (its
// Redis mode is what is broken on Redis 7; see docs/rate-limit.md). Cancellation: a waiting caller is
// released at once by its signal, and its queued job throws without claiming a slot when its turn comes.

export type RequestPriority = 'high' | 'normal' | 'low';

// Bottleneck priorities run 0 (first) to 9; 5 is its default.
const BOTTLENECK_PRIORITY: Record<RequestPriority, number> = { high: 1, normal: 5, low: 8 };

export class PriorityGate {
  readonly #limiter = new Bottleneck({ maxConcurrent: 1 });

  /** Runs `task` when every higher-priority (and earlier equal-priority) task has run. */
  async run<T>(
    priority: RequestPriority,
    signal: AbortSignal | undefined,
    task: () => Promise<T>,
  ): Promise<T> {
    signal?.throwIfAborted();
    const scheduled = this.#limiter.schedule({ priority: BOTTLENECK_PRIORITY[priority] }, () => {
      signal?.throwIfAborted();
      return task();
    });
    if (signal === undefined) return scheduled;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    // The abandoned job still settles later (it throws at once); keep that from going unhandled.
    scheduled.catch(() => undefined);
    try {
      return await Promise.race([scheduled, aborted]);
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  }

  get waiting(): number {
    const counts = this.#limiter.counts();
    return (counts.RECEIVED ?? 0) + (counts.QUEUED ?? 0);
  }
}
