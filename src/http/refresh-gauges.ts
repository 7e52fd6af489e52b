import type { PipelineMetrics } from '../metrics.js';
import type { GaugeFigures } from '../status/collect-status.js';
import { QUEUE_STATES, WINDOW_STATES } from '../status/status-report.js';
import { STREAM_NAME } from '../sync/stream-facts.js';

const CHECKINS = STREAM_NAME.checkins;

/**
 * Sets the shared-state gauges from what Postgres and Redis say now. A figure we could not
 * read is removed rather than left at its last value: a stale number looks healthy.
 */
export function refreshGauges(metrics: PipelineMetrics, figures: GaugeFigures): void {
  if (figures.checkins.lagSeconds === null) metrics.watermarkLagSeconds.remove({ stream: CHECKINS });
  else metrics.watermarkLagSeconds.set({ stream: CHECKINS }, figures.checkins.lagSeconds);

  for (const state of WINDOW_STATES) metrics.windowsByState.set({ state }, figures.windows.counts[state]);

  metrics.queueDepth.reset();
  for (const { queue, counts } of figures.queues.queues) {
    for (const state of QUEUE_STATES) metrics.queueDepth.set({ queue, state }, counts[state]);
  }

  metrics.openIntents.set(figures.intents.open);
  metrics.alertsUndelivered.set(figures.alerts.undelivered);
  metrics.alertsFailed.set(figures.alerts.failed);

  for (const { stream, intervalSeconds, lastSuccessAt } of figures.streams) {
    metrics.streamInterval.set({ stream }, intervalSeconds);
    if (lastSuccessAt === null) metrics.streamLastSuccess.remove({ stream });
    else metrics.streamLastSuccess.set({ stream }, new Date(lastSuccessAt).getTime() / 1000);
  }

  for (const [change, fields] of Object.entries(figures.schemaDrift)) {
    metrics.schemaDriftFields.set({ change }, fields);
  }

  // 0 also when OAuth is not configured: nothing to re-authorize.
  metrics.oauthNeedsReauthorization.set(
    figures.oauth.configured && figures.oauth.needsReauthorization ? 1 : 0,
  );
}
