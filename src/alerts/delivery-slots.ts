/**
 * The webhook POSTs of one process: at most `concurrency` at a time, whichever path sends them (the
 * alerts pass, or the fast path right after a payment commits), and the deliveries started in the
 * background (the intents tick never waits for a receiver), tracked so that shutdown waits for them.
 *
 * Per process, not shared across processes: N workers may have N × concurrency POSTs in flight
 * (docs/payment-intents.md). A delivery claims its alert only once it holds a slot, so an alert
 * never waits in this queue under its lease: the lease covers one POST, not a queue.
 */
export interface AlertDeliverySlots {
  /** Runs `work` once a slot is free; undefined, without running it, if closing reached its deadline first. */
  inSlot<T>(work: () => Promise<T>): Promise<T | undefined>;
  /** Starts `work` without waiting for it; `close` waits for it. A rejection is the caller's to handle first. */
  inBackground(work: () => Promise<void>): void;
  /** Background work started and not finished. */
  pending(): number;
  /** Resolves when every background work started so far has finished. */
  whenIdle(): Promise<void>;
  /**
   * Lets queued work start for `deadlineMs` more, then starts no more (the alerts stay due, and the
   * alerts pass sends them); resolves when all started work has finished.
   */
  close(deadlineMs: number): Promise<{ notStarted: number }>;
}

export function createAlertDeliverySlots(options: { concurrency: number }): AlertDeliverySlots {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  let active = 0;
  let refusing = false;
  let notStarted = 0;
  const waiting: Array<(granted: boolean) => void> = [];
  const background = new Set<Promise<void>>();

  const acquire = (): Promise<boolean> => {
    if (refusing) return Promise.resolve(false);
    if (active < concurrency) {
      active++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = () => {
    const next = waiting.shift();
    // The slot passes straight to the next waiter: `active` stays the same.
    if (next !== undefined) next(true);
    else active--;
  };
  const refuseQueued = () => {
    refusing = true;
    for (let next = waiting.shift(); next !== undefined; next = waiting.shift()) {
      notStarted++;
      next(false);
    }
  };
  const whenIdle = async () => {
    while (background.size > 0) await Promise.allSettled([...background]);
  };

  return {
    async inSlot(work) {
      if (!(await acquire())) return undefined;
      try {
        return await work();
      } finally {
        release();
      }
    },
    inBackground(work) {
      const running = work()
        .catch(() => undefined)
        .finally(() => background.delete(running));
      background.add(running);
    },
    pending: () => background.size,
    whenIdle,
    async close(deadlineMs) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, deadlineMs));
      });
      await Promise.race([whenIdle(), deadline]);
      clearTimeout(timer);
      refuseQueued();
      await whenIdle();
      return { notStarted };
    },
  };
}
