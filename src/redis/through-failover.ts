// A one-off command that a failover can fail outright, retried until Redis answers again.
//
// Most commands wait through a failover in their client's queue (maxRetriesPerRequest null). A few
// cannot: BullMQ's getWorkers() sends CLIENT LIST to every node of a Cluster, and ioredis gives a
// node that just died no retry ("Connection is closed."). Such a call is retried here, for about as
// long as a failover takes and then some; any other error, or the bound, stands.

const CONNECTION_ERRORS =
  /Connection is closed|ECONNREFUSED|ECONNRESET|EPIPE|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING/;

export function isFailoverError(error: unknown): boolean {
  return error instanceof Error && CONNECTION_ERRORS.test(error.message);
}

export async function throughFailover<T>(
  call: () => Promise<T>,
  options: { boundMs?: number; everyMs?: number } = {},
): Promise<T> {
  const giveUpAt = Date.now() + (options.boundMs ?? 60_000);
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!isFailoverError(error) || Date.now() >= giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 500));
    }
  }
}
