import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../redis/connection.js';
import { PriorityGate, type RequestPriority } from './priority-gate.js';
import type { LedgerCount } from './spend-ledger.js';

// One request budget for every process on one Redis (see docs/rate-limit.md). Time is cut into slots
// of 1000/rps ms, numbered by Redis's clock (TIME), never by a worker's: a request may start only
// inside a slot it claimed. One Lua script reads TIME, hands out the next free slot (the later of
// "now" and the slot after the last one handed out) and answers how long to wait for it, so each
// claim is one atomic round trip and exclusive across processes, and the wait is relative: a
// worker whose clock is minutes off claims the same slots and sleeps the same time as any other.
// Requests are therefore spaced, never bunched at a window edge: three processes at full speed
// still send at most one request per slot. A 429 sets a shared pause key (its TTL is Redis's
// too) that every process honours before claiming.
//
// One request costs one Redis command (issue 39: it cost six): the same script first reads the
// shared pause (answering how long it lasts, and whether it stops passes, instead of claiming),
// and counts the claimed request in the spend ledger (spend-ledger.ts) when the caller names its
// bucket. Every key it touches is under config.redisPrefix, hash-tagged on a Cluster, so one
// script may use them all.

export interface SharedRateLimiterOptions {
  redis: RedisClient;
  /** config.redisPrefix: tests isolate themselves with their own. */
  prefix: string;
  rps: number;
  /** This process's monotonic clock: only to measure how long a claim waited. */
  nowMs?: () => number;
  /** How many slots ahead one claim may reserve; past that it sleeps and asks again. */
  lookaheadSlots?: number;
}

export interface AcquireOptions {
  priority?: RequestPriority;
  /** Counts the request in the spend ledger in the claim's own round trip (SpendLedger.countOf). */
  count?: LedgerCount | undefined;
  signal?: AbortSignal | undefined;
  /** A shared pause longer than this fails the claim at once (SharedPauseTooLongError). */
  maxPauseMs?: number | undefined;
}

/**
 * A shared pause (another process's 429) outlasts what the caller may wait, or was set by a
 * Retry-After longer than RETRY_AFTER_MAX (`passesStopped`): then no request waits for it at all.
 */
export class SharedPauseTooLongError extends Error {
  override readonly name = 'SharedPauseTooLongError';
  constructor(
    readonly pausedForMs: number,
    readonly maxPauseMs: number,
    readonly passesStopped = false,
  ) {
    super(
      passesStopped
        ? `the partner API asked for a wait longer than RETRY_AFTER_MAX; every process is paused for ` +
            `${Math.round(pausedForMs / 1000)} s more and passes stop until a later one tries again`
        : `every process is paused for ${Math.round(pausedForMs / 1000)} s after a 429, longer than this ` +
            `request may wait (${Math.round(maxPauseMs / 1000)} s): it stops now and a later pass tries again`,
    );
  }
}

export interface SharedRateLimiter {
  /** Resolves when this process may send one request; returns the ms it waited. */
  acquire(options?: AcquireOptions): Promise<number>;
  /**
   * After a 429: every process waits this long before its next request. With `stopPasses` (a
   * Retry-After above RETRY_AFTER_MAX), a request meeting the pause fails at once instead of
   * waiting: every pass stops at its next request, and a later pass tries again.
   */
  pauseAll(ms: number, options?: { stopPasses?: boolean }): Promise<void>;
  /** Milliseconds left of a shared pause (0 when none). */
  pausedForMs(): Promise<number>;
  /** Milliseconds left of a pause that stops passes (pauseAll with `stopPasses`; 0 when none). */
  passesStoppedForMs(): Promise<number>;
  readonly slotMs: number;
}

/**
 * A shared pause is slept in slices of at most this long, re-reading it in between: a pause key
 * set by another process (or another version) can never arm a timer beyond Node's limit
 * (2^31 - 1 ms, past which setTimeout fires at once and the waiter would spin on Redis).
 */
const PAUSE_SLICE_MS = 60_000;
/** A request that woke up past its slot claims another at most this many times, then goes. */
const MAX_LATE_CLAIMS = 2;
/** No pause outlives a day, whatever a caller asks (callers cap at RETRY_AFTER_MAX already). */
const MAX_PAUSE_MS = 86_400_000;

export function slotLengthMs(rps: number): number {
  if (!(rps > 0) || !Number.isFinite(rps))
    throw new Error(`rate limit must be a positive number, got ${rps}`);
  return 1000 / rps;
}

/**
 * KEYS: the number of the next free slot, the shared pause, the pause that stops passes, and
 * (optional) the spend ledger's bucket. ARGV: slot length (µs, whole), how many slots ahead a
 * claim may reserve, the slot key's time to live (ms), the ledger's field and its bucket's time to
 * live (ms). Returns {2, ms the pause lasts, ms the stop lasts} while paused (nothing claimed),
 * {1, µs until the claimed slot starts} (the request counted), or {0, µs to wait before asking
 * again} when the next free slot is beyond reach. Slots count from the Unix epoch by Redis's
 * clock; Lua numbers are doubles, exact to 2^53 µs (year 2255).
 */
const CLAIM_SLOT = `
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then
  return {2, paused, redis.call('PTTL', KEYS[3])}
end
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local slotUs = tonumber(ARGV[1])
local current = math.floor(nowUs / slotUs)
local slot = math.max(current, tonumber(redis.call('GET', KEYS[1]) or '0'))
if slot - current > tonumber(ARGV[2]) then
  return {0, (slot - tonumber(ARGV[2])) * slotUs - nowUs}
end
redis.call('SET', KEYS[1], slot + 1, 'PX', ARGV[3])
if KEYS[4] then
  redis.call('HINCRBY', KEYS[4], ARGV[4], 1)
  redis.call('PEXPIRE', KEYS[4], ARGV[5])
end
return {1, slot * slotUs - nowUs}
`;

/** One limiter's fixed settings: its Redis keys and its slot arithmetic. */
interface LimiterSettings {
  redis: RedisClient;
  slotMs: number;
  /** Whole microseconds, rounded up: a slot never gets shorter than 1000/rps ms. */
  slotUs: number;
  nowMs: () => number;
  lookahead: number;
  pauseKey: string;
  stopKey: string;
  nextSlotKey: string;
  /** Only garbage collection: the key must outlive the slots it has handed out. */
  keyTtlMs: number;
  /** At high rates a slot is shorter than a timer's usual lateness: never stricter than this. */
  lateAfterMs: number;
}

function limiterSettings(options: SharedRateLimiterOptions): LimiterSettings {
  const slotMs = slotLengthMs(options.rps);
  const lookahead = options.lookaheadSlots ?? 8;
  return {
    redis: options.redis,
    slotMs,
    slotUs: Math.ceil(slotMs * 1000),
    nowMs: options.nowMs ?? (() => performance.now()),
    lookahead,
    pauseKey: `${options.prefix}:partner-api:pause-until`,
    stopKey: `${options.prefix}:partner-api:passes-stopped`,
    nextSlotKey: `${options.prefix}:partner-api:next-slot`,
    keyTtlMs: Math.max(2_000, Math.ceil(slotMs * (lookahead + 2))),
    lateAfterMs: Math.max(slotMs, 20),
  };
}

type ClaimAnswer =
  { kind: 'claimed' | 'full'; waitMs: number } | { kind: 'paused'; pausedMs: number; stopsPasses: boolean };

/** Claims a slot (and counts it): the ms until it starts, or the ms to wait, or the pause in force. */
async function claimSlot(limiter: LimiterSettings, count: LedgerCount | undefined): Promise<ClaimAnswer> {
  const keys = [limiter.nextSlotKey, limiter.pauseKey, limiter.stopKey, ...(count ? [count.key] : [])];
  const [status, first, second] = (await limiter.redis.eval(
    CLAIM_SLOT,
    keys.length,
    ...keys,
    limiter.slotUs,
    limiter.lookahead,
    limiter.keyTtlMs,
    count?.field ?? '',
    count?.ttlMs ?? 0,
  )) as [number, number, number | undefined];
  if (status === 2) return { kind: 'paused', pausedMs: first, stopsPasses: (second ?? 0) > 0 };
  return { kind: status === 1 ? 'claimed' : 'full', waitMs: Math.max(0, first / 1000) };
}

async function sharedPauseMs(limiter: LimiterSettings): Promise<number> {
  return Math.max(0, await limiter.redis.pttl(limiter.pauseKey));
}

/**
 * A shared pause met by a claim: fails when it is longer than the caller may wait or stops
 * passes, else sleeps one slice of it (then the claim is asked again).
 */
async function waitOutSharedPause(
  pause: { pausedMs: number; stopsPasses: boolean },
  signal: AbortSignal | undefined,
  maxPauseMs: number,
): Promise<void> {
  if (pause.pausedMs > maxPauseMs) throw new SharedPauseTooLongError(pause.pausedMs, maxPauseMs);
  if (pause.stopsPasses) throw new SharedPauseTooLongError(pause.pausedMs, maxPauseMs, true);
  await sleep(Math.min(pause.pausedMs, PAUSE_SLICE_MS), undefined, { signal });
}

async function acquireSlot(
  limiter: LimiterSettings,
  signal: AbortSignal | undefined,
  maxPauseMs: number,
  count: LedgerCount | undefined,
): Promise<void> {
  const { nowMs } = limiter;
  let lateClaims = 0;
  let toCount = count;
  for (;;) {
    signal?.throwIfAborted();
    // Redis answered `waitMs` at some instant between sending and receiving: the slot starts no
    // earlier than sentAt + waitMs (its deadline counts from there, so an answer that came back
    // late, e.g. across a failover, is seen as late) and no later than receivedAt + waitMs (the
    // sleep counts from there, so a request never starts before its slot).
    const sentAt = nowMs();
    const answer = await claimSlot(limiter, toCount);
    if (answer.kind === 'paused') {
      await waitOutSharedPause(answer, signal, maxPauseMs);
      continue;
    }
    const startsAt = sentAt + answer.waitMs;
    // Claimed: sleep until the slot starts. Not: every slot in reach is taken; wait for the
    // window to move on (another process's pause may have started meanwhile: look again).
    if (answer.waitMs > 0) await sleep(answer.waitMs, undefined, { signal });
    if (answer.kind !== 'claimed') continue;
    // Counted once: a late request's further claims do not count it again.
    toCount = undefined;
    // A request starts inside its slot or not at all, so no second holds more than rps + 1
    // starts: one that woke up past its slot (a busy event loop) claims another, twice at most.
    if (nowMs() - startsAt < limiter.lateAfterMs || lateClaims >= MAX_LATE_CLAIMS) return;
    lateClaims++;
  }
}

export function createSharedRateLimiter(options: SharedRateLimiterOptions): SharedRateLimiter {
  const limiter = limiterSettings(options);
  const { nowMs, redis, pauseKey, stopKey } = limiter;
  const gate = new PriorityGate();
  const pausedForMs = () => sharedPauseMs(limiter);
  return {
    slotMs: limiter.slotMs,
    async acquire(acquireOptions = {}) {
      const started = nowMs();
      const signal = acquireOptions.signal;
      const maxPauseMs = acquireOptions.maxPauseMs ?? Number.POSITIVE_INFINITY;
      await gate.run(acquireOptions.priority ?? 'normal', signal, () =>
        acquireSlot(limiter, signal, maxPauseMs, acquireOptions.count),
      );
      return Math.max(0, nowMs() - started);
    },
    async pauseAll(ms, pauseOptions = {}) {
      const wait = Math.ceil(Math.min(ms, MAX_PAUSE_MS));
      if (!(wait > 0)) return;
      // Keep the later of two pauses; a race between two 429s can only pick one of two server answers.
      // The pause is the key's time to live: Redis's clock, not this host's.
      if ((await pausedForMs()) < wait) await redis.set(pauseKey, '1', 'PX', wait);
      if (pauseOptions.stopPasses === true) await redis.set(stopKey, '1', 'PX', wait);
    },
    pausedForMs,
    passesStoppedForMs: async () => Math.max(0, await redis.pttl(stopKey)),
  };
}
