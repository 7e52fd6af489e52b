import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Logger } from '../log.js';
import {
  acquireLease,
  expireLease,
  leaseHolder,
  releaseLease,
  renewLease,
  type LeaseHolder,
  type LeaseRef,
} from '../warehouse/leases.js';
import type { DB } from '../warehouse/schema.js';
import { fenced, unfenced, type LeasedDatabase } from './fenced-database.js';
import { LeaseLostError } from './lease-lost-error.js';
import { currentProcess, holderIsGone, type ProcessIdentity } from './process-identity.js';
import { acquiredLease, leaseTiming, stepLease, type LeaseState, type LeaseTiming } from './lease-timing.js';

/** A lease this process holds while its work runs. */
export interface HeldLease extends LeaseRef {
  /** The database the work writes through: every write checks this lease (and any outer one). */
  db: LeasedDatabase;
  /**
   * Aborted, with a LeaseLostError as its reason, as soon as the lease is known lost; also when
   * the caller's signal aborts (shutdown). The work passes it on to everything it awaits.
   */
  signal: AbortSignal;
}

export interface LeaseOptions {
  /** How long one acquisition or renewal holds the lease (LEASE_TTL). */
  ttlMs: number;
  /** Shutdown: merged into the lease's signal. */
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
  /** Who holds it, as the leases table shows it (default: host/pid). */
  holder?: string;
  /** This process (tests stand in for another one). */
  identity?: ProcessIdentity;
}

export type LeaseOutcome<T> =
  | { acquired: true; value: T }
  /** Someone else holds it: who, and for how long at most unless renewed (null: just released). */
  | { acquired: false; heldBy: LeaseHolder | null };

/**
 * Runs `work` under the lease `name`, or returns `{ acquired: false }` (with who holds it) at once
 * when another holder has it; a holder of this host that is gone is taken over at once. While the
 * work runs the lease is renewed every third of its TTL; when it is lost (refused, or not renewed
 * before its local deadline) the work's signal aborts and every further write through `lease.db`
 * fails the fencing check. Then this throws LeaseLostError, whatever the
 * work returned or threw: another holder may be doing the work now. Otherwise the lease is
 * released (a release that fails just lets it expire).
 *
 * Correct through a transaction-mode pooler and across dropped connections: nothing is held by a
 * connection; every statement is independent, and the expiry is Postgres's clock.
 */
export async function withLease<T>(
  db: Kysely<DB>,
  name: string,
  options: LeaseOptions,
  work: (lease: HeldLease) => Promise<T>,
): Promise<LeaseOutcome<T>> {
  const base = unfenced(db);
  const timing = leaseTiming(options.ttlMs);
  const self = options.identity ?? currentProcess();
  const acquire = async () => {
    const sentAtMs = performance.now();
    const token = await acquireLease(base, {
      name,
      holder: options.holder ?? self.holder,
      hostKey: self.hostKey,
      pid: self.pid,
      ttlMs: timing.ttlMs,
    });
    return { token, sentAtMs };
  };
  let { token, sentAtMs } = await acquire();
  if (token === null) {
    const heldBy = await leaseHolder(base, name).catch(() => null);
    // A holder on this host that no longer exists (kill -9, a crash) cannot renew: take the lease
    // over now rather than after its TTL. Fenced by the token, so this is safe even if wrong.
    if (heldBy === null || !holderIsGone(self, heldBy)) return { acquired: false, heldBy };
    await expireLease(base, { name, token: heldBy.token });
    options.logger?.info(
      { lease: name, holder: heldBy.holder },
      'lease of a dead process on this host taken over',
    );
    ({ token, sentAtMs } = await acquire());
    if (token === null) return { acquired: false, heldBy: await leaseHolder(base, name).catch(() => null) };
  }
  const ref = { name, token };
  const keeper = new LeaseKeeper(base, ref, timing, acquiredLease(sentAtMs, timing), options.logger);
  const signal =
    options.signal === undefined ? keeper.signal : AbortSignal.any([options.signal, keeper.signal]);
  let value: T;
  try {
    value = await work({ ...ref, db: fenced(db, ref), signal });
  } catch (error) {
    keeper.stop();
    const lost = keeper.lostError();
    if (lost !== undefined)
      throw lost === error ? lost : new LeaseLostError(name, lost.reason, { cause: error });
    await release(base, ref, timing);
    throw error;
  }
  keeper.stop();
  const lost = keeper.lostError();
  if (lost !== undefined) throw lost;
  await release(base, ref, timing);
  return { acquired: true, value };
}

/** Gives the lease back, waiting at most a TTL (it expires by then anyway). */
async function release(base: Kysely<DB>, ref: LeaseRef, timing: LeaseTiming): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    releaseLease(base, ref).catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timing.ttlMs);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

/** Renews a held lease on schedule and declares it lost (aborting its signal) per lease-timing.ts. */
class LeaseKeeper {
  readonly #controller = new AbortController();
  #state: LeaseState;
  #renewTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** A renewal is in flight: never two at once. */
  #renewing = false;

  constructor(
    private readonly base: Kysely<DB>,
    private readonly ref: LeaseRef,
    private readonly timing: LeaseTiming,
    initial: LeaseState,
    private readonly logger: Logger | undefined,
  ) {
    this.#state = initial;
    this.#arm();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  lostError(): LeaseLostError | undefined {
    const reason: unknown = this.#controller.signal.reason;
    return this.#controller.signal.aborted && reason instanceof LeaseLostError ? reason : undefined;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#deadlineTimer);
  }

  #apply(event: Parameters<typeof stepLease>[1]): void {
    if (this.#stopped) return;
    this.#state = stepLease(this.#state, event, this.timing);
    if (this.#state.phase === 'held' && event.kind !== 'tick') {
      this.#state = stepLease(this.#state, { kind: 'tick', atMs: performance.now() }, this.timing);
    }
    this.#arm();
  }

  /** Timers for the current state: the next renewal, and the deadline past which the lease is lost. */
  #arm(): void {
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#deadlineTimer);
    const state = this.#state;
    if (state.phase === 'lost') {
      this.stop();
      this.logger?.warn({ lease: this.ref.name, token: this.ref.token, reason: state.reason }, 'lease lost');
      this.#controller.abort(new LeaseLostError(this.ref.name, state.reason));
      return;
    }
    const now = performance.now();
    this.#deadlineTimer = setTimeout(
      () => this.#apply({ kind: 'tick', atMs: performance.now() }),
      Math.max(0, state.deadlineMs - now),
    );
    this.#deadlineTimer.unref();
    if (this.#renewing) return;
    this.#renewTimer = setTimeout(() => void this.#renew(), Math.max(0, state.renewAtMs - now));
    this.#renewTimer.unref();
  }

  async #renew(): Promise<void> {
    // The deadline timer stays armed meanwhile: a renewal that hangs (a cut network path) cannot
    // keep the lease alive past its deadline.
    clearTimeout(this.#renewTimer);
    this.#renewing = true;
    const sentAtMs = performance.now();
    let event: Parameters<typeof stepLease>[1];
    try {
      const renewed = await renewLease(this.base, { ...this.ref, ttlMs: this.timing.ttlMs });
      event = renewed ? { kind: 'renewed', sentAtMs } : { kind: 'refused' };
    } catch (error) {
      if (!this.#stopped) {
        this.logger?.warn({ err: error, lease: this.ref.name }, 'lease renewal failed; retrying');
      }
      event = { kind: 'failed', atMs: performance.now() };
    }
    this.#renewing = false;
    this.#apply(event);
  }
}
