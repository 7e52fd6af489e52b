// Below every layer that waits on a server with a bound: the worker's liveness watchdog, `status`,
// readiness and `doctor`.

/** Rejects after `ms`: a Redis client with `maxRetriesPerRequest: null` waits forever while Redis is down. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
