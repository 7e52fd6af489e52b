import type { Config } from '../config/config.js';
import type { RedisClient } from '../redis/connection.js';
import type { Window } from '../sync/windows.js';
import type { SyncWindow } from '../warehouse/schema.js';

/**
 * Hands windows to the workers from a one-shot command (`backfill`, `verify --repair`):
 * enqueueWindows (src/streams/checkins/window-jobs.ts), as the planner job does, on the window
 * queue opened for this call only.
 */
export async function enqueueWindowsFor(
  config: Config,
  redis: RedisClient,
  windows: ReadonlyArray<SyncWindow | (Window & { generation: number })>,
): Promise<number> {
  const { enqueueWindows } = await import('../streams/checkins/window-jobs.js');
  const { JOB_OPTIONS, QUEUES } = await import('../worker/queues.js');
  const { createQueue } = await import('../worker/queue-setup.js');
  const queue = createQueue(config, redis, QUEUES.checkinsWindow);
  try {
    return await enqueueWindows(queue, windows, JOB_OPTIONS);
  } finally {
    await queue.close();
  }
}
