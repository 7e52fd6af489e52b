// How far another machine's clock (Postgres's, Redis's) is from this host's, from timed round
// trips. Pure: the probes that take the samples live with the services (postgres-clock.ts, doctor).

/** One round trip: this host's clock when the request left and when the answer came, and the server's time in between. */
export interface ClockSample {
  sentAtMs: number;
  serverMs: number;
  receivedAtMs: number;
}

export interface ClockOffset {
  /** Server time − this host's time: add it to the host's clock to read the server's. */
  offsetMs: number;
  /** The true offset lies within ± this (half the round trip of the sample used). */
  errorMs: number;
}

/**
 * The offset from the sample with the shortest round trip (the tightest bound): the server read
 * its clock somewhere between send and receive, so its best estimate is the midpoint, off by at
 * most half the round trip. Null when there is no usable sample (none, or a clock that ran
 * backwards during one).
 */
export function offsetOf(samples: readonly ClockSample[]): ClockOffset | null {
  let best: ClockSample | null = null;
  for (const sample of samples) {
    const rtt = sample.receivedAtMs - sample.sentAtMs;
    if (!(rtt >= 0) || !Number.isFinite(sample.serverMs)) continue;
    if (best === null || rtt < best.receivedAtMs - best.sentAtMs) best = sample;
  }
  if (best === null) return null;
  const rtt = best.receivedAtMs - best.sentAtMs;
  return { offsetMs: best.serverMs - (best.sentAtMs + rtt / 2), errorMs: rtt / 2 };
}

/** A clock offset as a person reads it: "0.4 s ahead of Postgres", "12 ms behind Redis". */
export function describeOffset(offset: ClockOffset, server: string): string {
  const magnitude = Math.abs(offset.offsetMs);
  const amount = magnitude < 1_000 ? `${Math.round(magnitude)} ms` : `${(magnitude / 1000).toFixed(1)} s`;
  // offset > 0: the server is ahead, so this host is behind it.
  return `this host is ${amount} ${offset.offsetMs > 0 ? 'behind' : 'ahead of'} ${server} (±${Math.ceil(offset.errorMs)} ms)`;
}
