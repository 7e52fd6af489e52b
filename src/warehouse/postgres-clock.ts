import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { offsetOf, type ClockOffset, type ClockSample } from '../clock-offset.js';
import type { Logger } from '../log.js';
import type { DB } from './schema.js';

/**
 * The pipeline's one clock: Postgres's (docs/running-in-production.md, "One clock"). Every time
 * the pipeline computes and stores, or compares with a stored time, is Postgres's: leases, due
 * times and backoffs are computed by Postgres itself (now() in the statement), and where a pure
 * function needs "now" (the next poll of an intent, a window's end, a row's last_seen_at) it reads
 * this clock: the host's clock plus the offset to Postgres's, measured with `select
 * clock_timestamp()` (the best of a few round trips, error ± half of one) and measured again every
 * `refreshMs`. A host whose clock is minutes off therefore writes and compares the same times as
 * every other host. Its own clock is left to logs and to timers.
 */
export interface PostgresClock extends Clock {
  /** Measures the offset now (the runtime awaits the first measurement before work starts). */
  sync(): Promise<ClockOffset>;
  /** The last measurement; null before the first one succeeded (now() is the host's clock until then). */
  offset(): ClockOffset | null;
  /** Stops the periodic measurement. */
  close(): void;
}

const SAMPLES = 3;

/** One timed `select clock_timestamp()`; `nowMs` is this host's clock (injected by tests). */
export async function samplePostgresClock(
  db: Kysely<DB>,
  nowMs: () => number = Date.now,
): Promise<ClockSample> {
  const sentAtMs = nowMs();
  const { rows } = await sql<{ ms: number }>`
    select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`.execute(db);
  const receivedAtMs = nowMs();
  return { sentAtMs, serverMs: Number(rows[0]?.ms), receivedAtMs };
}

/** The offset of Postgres's clock to this host's, from a few round trips. */
export async function measurePostgresOffset(
  db: Kysely<DB>,
  options: { samples?: number; nowMs?: () => number } = {},
): Promise<ClockOffset> {
  const taken: ClockSample[] = [];
  for (let i = 0; i < (options.samples ?? SAMPLES); i++)
    taken.push(await samplePostgresClock(db, options.nowMs));
  const offset = offsetOf(taken);
  if (offset === null) throw new Error('could not measure the clock offset to Postgres');
  return offset;
}

export function createPostgresClock(
  db: Kysely<DB>,
  options: { refreshMs?: number; logger?: Logger } = {},
): PostgresClock {
  const refreshMs = options.refreshMs ?? 60_000;
  let current: ClockOffset | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let pending: Promise<ClockOffset> | undefined;

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      clock.sync().catch((error: unknown) => {
        // The last offset stays in use: clocks drift by milliseconds a minute, not more.
        options.logger?.warn({ err: error }, 'could not measure the clock offset to Postgres');
      });
    }, refreshMs);
    timer.unref();
  };

  const clock: PostgresClock = {
    now: () => new Date(Date.now() + (current?.offsetMs ?? 0)),
    offset: () => current,
    sync() {
      pending ??= measurePostgresOffset(db)
        .then((offset) => {
          const previous = current;
          current = offset;
          if (previous === null || Math.abs(previous.offsetMs - offset.offsetMs) > 1_000) {
            options.logger?.info(
              { offsetMs: Math.round(offset.offsetMs), errorMs: Math.ceil(offset.errorMs) },
              "clock offset to Postgres measured (the pipeline's times are Postgres's)",
            );
          }
          return offset;
        })
        .finally(() => {
          pending = undefined;
          clearTimeout(timer);
          schedule();
        });
      return pending;
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
  return clock;
}
