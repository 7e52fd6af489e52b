import type { RedisClient } from '../redis/connection.js';
import type { Kysely } from 'kysely';
import { offsetOf, type ClockOffset, type ClockSample } from '../clock-offset.js';
import { withTimeout } from '../with-timeout.js';
import { measurePostgresOffset } from '../warehouse/postgres-clock.js';
import type { DB } from '../warehouse/schema.js';

// How far Postgres's clock (the pipeline's) and Redis's (the shared rate limit's) are from this
// host's. Information: the pipeline never compares this host's clock with either.

const SAMPLES = 3;

export async function probePostgresOffset(
  db: Kysely<DB>,
  nowMs: () => number,
  timeoutMs: number,
): Promise<ClockOffset | null> {
  return withTimeout(measurePostgresOffset(db, { nowMs }), timeoutMs, 'postgres clock').catch(() => null);
}

/** Redis's `TIME` (seconds and microseconds), timed like the Postgres samples. */
export async function probeRedisOffset(
  redis: RedisClient,
  nowMs: () => number,
  timeoutMs: number,
): Promise<ClockOffset | null> {
  const measure = async () => {
    const samples: ClockSample[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const sentAtMs = nowMs();
      const [seconds, micros] = await redis.time();
      const receivedAtMs = nowMs();
      samples.push({ sentAtMs, serverMs: Number(seconds) * 1000 + Number(micros) / 1000, receivedAtMs });
    }
    return offsetOf(samples);
  };
  return withTimeout(measure(), timeoutMs, 'redis clock').catch(() => null);
}
