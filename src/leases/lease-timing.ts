// When a lease holder renews, retries, and gives up. Pure: times are milliseconds of a monotonic
// clock (performance.now()), never wall-clock time, so a host's clock being off changes nothing.
//
// Why a local deadline is safe: Postgres computes a lease's expiry as its own now() + TTL when it
// executes the acquire or renew statement, which is after the request left this process. So
// `request sent + TTL` (local, monotonic) is never later than the real expiry: a holder that stops
// at its local deadline stops before anyone else can take the lease. Writes are fenced anyway
// (src/leases/fenced-database.ts); the deadline only makes the holder stop early instead of
// failing on its next write.

export interface LeaseTiming {
  ttlMs: number;
  /** Renew this long after the last successful renewal was sent (a third of the TTL). */
  renewEveryMs: number;
  /** After a failed renewal (Postgres unreachable), try again this soon. */
  retryEveryMs: number;
}

export function leaseTiming(ttlMs: number): LeaseTiming {
  if (!(ttlMs >= 300) || !Number.isFinite(ttlMs)) throw new Error(`lease TTL too short: ${ttlMs} ms`);
  return {
    ttlMs,
    renewEveryMs: Math.floor(ttlMs / 3),
    retryEveryMs: Math.max(100, Math.min(1_000, Math.floor(ttlMs / 10))),
  };
}

export type LeaseState =
  | {
      phase: 'held';
      /** The lease is surely expired by then unless a renewal sent before it succeeds. */
      deadlineMs: number;
      /** When to send the next renewal. */
      renewAtMs: number;
    }
  | { phase: 'lost'; reason: string };

export type LeaseEvent =
  /** A renewal sent at `sentAtMs` came back: the lease is ours until at least sentAtMs + TTL. */
  | { kind: 'renewed'; sentAtMs: number }
  /** A renewal came back with no row: the lease expired or another holder has it. */
  | { kind: 'refused' }
  /** A renewal failed (connection error) at `atMs`. */
  | { kind: 'failed'; atMs: number }
  /** Time passed: `atMs` is now. */
  | { kind: 'tick'; atMs: number };

export const NOT_RENEWED = 'not renewed before it expired (Postgres unreachable or too slow)';
export const REFUSED = 'it expired, or another holder took it';

/** The state right after acquiring (the acquire statement was sent at `sentAtMs`). */
export function acquiredLease(sentAtMs: number, timing: LeaseTiming): LeaseState {
  return { phase: 'held', deadlineMs: sentAtMs + timing.ttlMs, renewAtMs: sentAtMs + timing.renewEveryMs };
}

/** The next state. `lost` is final: a lease once lost is never held again by this holder. */
export function stepLease(state: LeaseState, event: LeaseEvent, timing: LeaseTiming): LeaseState {
  if (state.phase === 'lost') return state;
  switch (event.kind) {
    case 'refused':
      return { phase: 'lost', reason: REFUSED };
    case 'tick':
      return event.atMs >= state.deadlineMs ? { phase: 'lost', reason: NOT_RENEWED } : state;
    case 'failed':
      if (event.atMs >= state.deadlineMs) return { phase: 'lost', reason: NOT_RENEWED };
      return { ...state, renewAtMs: Math.min(event.atMs + timing.retryEveryMs, state.deadlineMs) };
    case 'renewed': {
      // A renewal is only as good as the moment it left: an answer that took longer than the TTL
      // proves nothing about now.
      const deadlineMs = Math.max(state.deadlineMs, event.sentAtMs + timing.ttlMs);
      return {
        phase: 'held',
        deadlineMs,
        renewAtMs: Math.min(event.sentAtMs + timing.renewEveryMs, deadlineMs),
      };
    }
  }
}
