// The abort signal a job's code is given (src/worker/worker.ts).

/**
 * BullMQ aborts a job's signal with the string given to cancelAllJobs; code under the job
 * (p-retry, `signal.throwIfAborted()`) throws `signal.reason`, and a thrown string reads as
 * "Non-error was thrown". The job gets a signal that aborts with an Error naming that reason.
 */
export function withErrorReason(signal: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const abort = () => {
    const reason: unknown = signal.reason;
    const message = typeof reason === 'string' && reason !== '' ? reason : 'job cancelled';
    controller.abort(reason instanceof Error ? reason : new JobCancelledError(message));
  };
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  return controller.signal;
}

/** A job cancelled by its worker (shutting down, or restarting a stuck queue worker). */
export class JobCancelledError extends Error {
  override readonly name = 'JobCancelledError';
}
