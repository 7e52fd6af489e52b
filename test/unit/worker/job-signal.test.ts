import pRetry from 'p-retry';
import { describe, expect, it } from 'vitest';
import { JobCancelledError, withErrorReason } from '../../../src/worker/job-signal.js';

describe("a job's abort signal", () => {
  it("aborts with an Error naming BullMQ's string reason, so retries stop with a readable error", async () => {
    const bullmq = new AbortController();
    const signal = withErrorReason(bullmq.signal);
    const attempt = pRetry(
      () => {
        bullmq.abort('worker shutting down');
        return Promise.reject(new Error('request failed'));
      },
      { retries: 3, minTimeout: 1, signal },
    );
    await expect(attempt).rejects.toThrow(JobCancelledError);
    await expect(attempt).rejects.toThrow('worker shutting down');
    expect(signal.aborted).toBe(true);
  });

  it('keeps an Error reason as it is, and follows a signal aborted already', () => {
    const reason = new Error('stuck');
    const bullmq = new AbortController();
    bullmq.abort(reason);
    expect(withErrorReason(bullmq.signal).reason).toBe(reason);
  });
});
