import type { ApiMetrics } from '../api/metrics.js';
import type { PipelineMetrics } from '../metrics.js';

/** The API client's metric hooks, recorded in this process's Prometheus registry. */
export function bindApiMetrics(metrics: PipelineMetrics): ApiMetrics {
  return {
    requestCompleted: ({ route, status }, durationMs) => {
      metrics.apiRequests.inc({ route, status });
      metrics.apiRequestSeconds.observe({ route }, durationMs / 1000);
    },
    requestRetried: ({ route, reason }) => metrics.apiRetries.inc({ route, reason }),
    rateLimited: ({ route }) => metrics.api429s.inc({ route }),
    limiterWaited: (ms) => metrics.limiterWaitSeconds.inc(ms / 1000),
    tokenRefreshed: (outcome) => metrics.oauthRefreshes.inc({ outcome }),
  };
}
