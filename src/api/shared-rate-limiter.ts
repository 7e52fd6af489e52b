import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { PriorityGate, type RequestPriority } from './priority-gate.js';

// One request budget for every process on one Redis (see docs/rate-limit.md). Time is cut into slots
// of 1000/rps ms aligned to the clock; a request may start only inside a slot it claimed, and
// rate-limiter-flexible's atomic consume (1 point per slot key) makes each claim exclusive across
// processes. Requests are therefore spaced, never bunched at a window edge: three processes at full
// speed still send at most one request per slot. A 429 sets a shared pause-until key that every
// process honours before claiming.

export interface SharedRateLimiterOptions {
  redis: Redis;
  /** config.redisPrefix: tests isolate themselves with their own. */
  prefix: string;
  rps: number;
  nowMs?: () => number;
  /** How many slots ahead one claim may look before sleeping; bounds Redis calls per claim. */
  lookaheadSlots?: number;
}

export interface AcquireOptions {
  priority?: RequestPriority;
  signal?: AbortSignal | undefined;
  /** A shared pause longer than this fails the claim at once (SharedPauseTooLongError). */
  maxPauseMs?: number | undefined;
}

/** A shared pause (another process's 429) outlasts what the caller may wait. */
export class SharedPauseTooLongError extends Error {
  override readonly name = 'SharedPauseTooLongError';
  constructor(
    readonly pausedForMs: number,
    readonly maxPauseMs: number,
  ) {
    super(
      `every process is paused for ${Math.round(pausedForMs / 1000)} s after a 429, longer than this ` +
        `request may wait (${Math.round(maxPauseMs / 1000)} s): it stops now and a later pass tries again`,
    );
  }
}

export interface SharedRateLimiter {
  /** Resolves when this process may send one request; returns the ms it waited. */
  acquire(options?: AcquireOptions): Promise<number>;
  /** After a 429: every process waits this long before its next request. */
  pauseAll(ms: number): Promise<void>;
  /** Milliseconds left of a shared pause (0 when none). */
  pausedForMs(): Promise<number>;
  readonly slotMs: number;
}

/**
 * A shared pause is slept in slices of at most this long, re-reading it in between: a pause key
 * set by another process (or another version) can never arm a timer beyond Node's limit
 * (2^31 - 1 ms, past which setTimeout fires at once and the waiter would spin on Redis).
 */
const PAUSE_SLICE_MS = 60_000;
/** No pause outlives a day, whatever a caller asks (callers cap at RETRY_AFTER_MAX already). */
const MAX_PAUSE_MS = 86_400_000;

export function slotLengthMs(rps: number): number {
  if (!(rps > 0) || !Number.isFinite(rps))
    throw new Error(`rate limit must be a positive number, got ${rps}`);
  return 1000 / rps;
}

export function createSharedRateLimiter(options: SharedRateLimiterOptions): SharedRateLimiter {
  const slotMs = slotLengthMs(options.rps);
  const nowMs = options.nowMs ?? Date.now;
  const lookahead = options.lookaheadSlots ?? 8;
  const pauseKey = `${options.prefix}:partner-api:pause-until`;
  const slots = new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: `${options.prefix}:partner-api:slot`,
    points: 1,
    // Only garbage collection: a slot key must outlive the moment its slot passes.
    duration: Math.max(2, Math.ceil((slotMs * (lookahead + 2)) / 1000)),
  });
  const gate = new PriorityGate();

  async function claim(slot: number): Promise<boolean> {
    try {
      await slots.consume(String(slot), 1);
      return true;
    } catch (error) {
      if (error instanceof RateLimiterRes) return false;
      throw error;
    }
  }

  async function pausedForMs(): Promise<number> {
    return Math.max(0, await options.redis.pttl(pauseKey));
  }

  async function acquireSlot(signal: AbortSignal | undefined, maxPauseMs: number): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const paused = await pausedForMs();
      if (paused > maxPauseMs) throw new SharedPauseTooLongError(paused, maxPauseMs);
      if (paused > 0) {
        await sleep(Math.min(paused, PAUSE_SLICE_MS), undefined, { signal });
        continue;
      }
      const current = Math.floor(nowMs() / slotMs);
      for (let slot = current; slot <= current + lookahead; slot++) {
        if (await claim(slot)) {
          const startsIn = slot * slotMs - nowMs();
          if (startsIn > 0) await sleep(startsIn, undefined, { signal });
          return;
        }
      }
      // Every slot in reach is taken: wait for the window to move on.
      await sleep(slotMs * lookahead, undefined, { signal });
    }
  }

  return {
    slotMs,
    async acquire(acquireOptions = {}) {
      const started = nowMs();
      const signal = acquireOptions.signal;
      const maxPauseMs = acquireOptions.maxPauseMs ?? Number.POSITIVE_INFINITY;
      await gate.run(acquireOptions.priority ?? 'normal', signal, () => acquireSlot(signal, maxPauseMs));
      return Math.max(0, nowMs() - started);
    },
    async pauseAll(ms) {
      const wait = Math.ceil(Math.min(ms, MAX_PAUSE_MS));
      if (!(wait > 0)) return;
      // Keep the later of two pauses; a race between two 429s can only pick one of two server answers.
      if ((await pausedForMs()) < wait) await options.redis.set(pauseKey, String(nowMs() + wait), 'PX', wait);
    },
    pausedForMs,
  };
}
