// What the API client reports; the lead binds it to prom-client. Labels are bounded: routes are
// templates (`/locations/{id}`), statuses are HTTP codes or a failure kind.

export interface ApiMetrics {
  /** One HTTP exchange (each attempt counts). `status` is the code, or `network`/`timeout`. */
  requestCompleted(labels: { route: string; method: string; status: string }, durationMs: number): void;
  /** An attempt failed and will be retried; `reason` is the error name. */
  requestRetried(labels: { route: string; reason: string }): void;
  /** A 429 from the partner. */
  rateLimited(labels: { route: string }): void;
  /** Time spent waiting for the shared rate limit before one attempt. */
  limiterWaited(ms: number): void;
  /** A token refresh against the token endpoint. */
  tokenRefreshed(outcome: 'ok' | 'revoked' | 'failed'): void;
}

export const noopApiMetrics: ApiMetrics = {
  requestCompleted: () => undefined,
  requestRetried: () => undefined,
  rateLimited: () => undefined,
  limiterWaited: () => undefined,
  tokenRefreshed: () => undefined,
};
