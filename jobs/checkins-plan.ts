import { z } from 'zod';
import { CHECKINS } from '../src/streams/checkins/deps.js';
import { planAndRecheck } from '../src/streams/checkins/plan-and-recheck.js';
import { updateWatermark } from '../src/streams/checkins/watermark.js';
import { windowsToPage } from '../src/streams/checkins/windows-to-page.js';
import { STREAMS, followUpsOf } from '../src/streams/registry.js';
import { countLocations } from '../src/warehouse/locations.js';
import { defineJob } from '../src/worker/job-definition.js';
import { QUEUES } from '../src/worker/queues.js';
import { enqueueWindows } from './checkins-window.js';
import { enqueueCatchUp } from './stream-pass.js';

/** Plans new check-in windows up to now − CHECKINS_SAFETY_LAG, runs the look-back, and hands every
 * due window to the window queue. What is due is read from sync_windows, so a missed tick loses
 * nothing: the next one finds the same windows due. */
export const checkinsPlanJob = defineJob({
  name: 'checkins-plan',
  queue: QUEUES.checkinsPlan,
  payload: z.object({}),
  schedules: (config) => [{ id: 'checkins-plan', everyMs: STREAMS.checkins.everyMs(config), data: {} }],
  async process(context) {
    const { deps } = context;
    const prepared = await planAndRecheck(deps);
    const due = await windowsToPage(deps.db);
    const enqueued = await enqueueWindows(context.queue(QUEUES.checkinsWindow), due);
    const watermark = await updateWatermark(deps);
    const { neverRefreshed } = await countLocations(deps.db);
    for (const next of followUpsOf(deps.config, CHECKINS, { locationsNeverRefreshed: neverRefreshed })) {
      await enqueueCatchUp(context.queue(QUEUES.streams), next);
    }
    return { ...prepared, enqueued, watermark, locationsNeverRefreshed: neverRefreshed };
  },
});
