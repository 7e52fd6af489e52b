import pg from 'pg';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import { createOneShotClient } from '../redis/connection.js';
import { describeRedis, type RedisSettings } from '../redis/settings.js';
import { CliExit, ExitCode } from './exit-codes.js';

// Start-up of a command that needs Postgres or Redis: wait for each a bounded time (STARTUP_TIMEOUT),
// one JSON log line per failed attempt naming the setting and the cause, then exit 1 with one plain
// line saying the same. Before this, an unreachable Redis hung every command for ever (ioredis
// reconnects without end) and an unreachable Postgres printed a bare `connect ECONNREFUSED`.
// A worker that loses a service *after* start-up is not this module's business: it reconnects.

export type PostgresSetting = 'DATABASE_URL' | 'DATABASE_MIGRATE_URL';
export type RedisSetting = 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_CLUSTER_NODES';

/** The variable that says where Redis is, by the deployment's mode. */
export function redisSetting(settings: RedisSettings): RedisSetting {
  switch (settings.topology.mode) {
    case 'standalone':
      return 'REDIS_URL';
    case 'sentinel':
      return 'REDIS_SENTINELS';
    case 'cluster':
      return 'REDIS_CLUSTER_NODES';
  }
}

/** What one attempt found: reachable, worth another try, or wrong in a way waiting cannot fix. */
export type Attempt = { ok: true } | { ok: false; cause: string; final: boolean };

export interface ServiceProbe {
  service: 'Postgres' | 'Redis';
  setting: string;
  /** Where, without credentials: `127.0.0.1:5433/rewards_etl`, `standalone 127.0.0.1:6380`. */
  target: string;
  attempt(timeoutMs: number): Promise<Attempt>;
  /** What to check, for the final line. */
  advice: string;
}

/** Pause before attempt n+1: 0.5 s, 1 s, 2 s, then every 3 s. */
export function startupRetryDelayMs(attempt: number): number {
  return Math.min(500 * 2 ** (attempt - 1), 3_000);
}

export interface WaitOptions {
  timeoutMs: number;
  logger: Logger;
  nowMs?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Tries until the probe answers or the timeout passes; throws CliExit(1) naming the setting. */
export async function waitForService(probe: ServiceProbe, options: WaitOptions): Promise<void> {
  const now = options.nowMs ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = now();
  const deadline = started + options.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    const left = Math.max(deadline - now(), 0);
    const result = await probe.attempt(Math.max(Math.min(left, 5_000), 1_000));
    if (result.ok) {
      if (attempt > 1) options.logger.info({ setting: probe.setting, attempt }, `${probe.service} reachable`);
      return;
    }
    const waitedMs = now() - started;
    const fields = {
      setting: probe.setting,
      target: probe.target,
      cause: result.cause,
      attempt,
      waitedMs,
      timeoutMs: options.timeoutMs,
    };
    const last = result.final || now() + startupRetryDelayMs(attempt) > deadline;
    options.logger.warn(
      fields,
      last
        ? `${probe.service} ${result.final ? 'refused the connection' : 'unreachable'} (${probe.setting}): ${result.cause}`
        : `waiting for ${probe.service} (${probe.setting}): ${result.cause}`,
    );
    if (last) {
      // The last JSON line first, then the plain one (the logger writes asynchronously).
      await new Promise<void>((resolve) => {
        try {
          options.logger.flush(() => resolve());
        } catch {
          resolve();
        }
      });
      const waited = result.final ? '' : ` after ${Math.round(waitedMs / 1000)} s (STARTUP_TIMEOUT)`;
      throw new CliExit(
        ExitCode.failed,
        `${probe.service} at ${probe.target} ${result.final ? 'refused the connection' : `unreachable${waited}`}: ${result.cause}; check ${probe.setting}${probe.advice}`,
      );
    }
    await sleep(startupRetryDelayMs(attempt));
  }
}

/** Connection-level failures worth waiting through; anything else (a bad password) is final. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '57P03', // the database system is starting up
  '53300', // too many connections
]);

/** `connect ECONNREFUSED 127.0.0.1:5433`, from an Error, an AggregateError (::1 and 127.0.0.1) or pg's. */
export function causeOf(error: unknown): { text: string; code: string | undefined } {
  const inner =
    error instanceof AggregateError && error.errors.length > 0 ? (error.errors[0] as unknown) : error;
  const raw = (inner as { code?: unknown }).code ?? (error as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : undefined;
  const message = inner instanceof Error ? inner.message : String(inner);
  const text = (message.trim() === '' ? (code ?? 'connection failed') : message).split('\n')[0] ?? '';
  return { text, code };
}

export function postgresProbe(url: string, setting: PostgresSetting = 'DATABASE_URL'): ServiceProbe {
  const parsed = new URL(url);
  const target = `${parsed.host}${parsed.pathname}`;
  return {
    service: 'Postgres',
    setting,
    target,
    advice: ' (host, port, user, password) and that PostgreSQL is running',
    async attempt(timeoutMs) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return { ok: true };
      } catch (error) {
        const { text, code } = causeOf(error);
        // A missing database is reachable: `migrate` creates it, the other commands say to run it.
        if (code === '3D000') return { ok: true };
        const transient = code === undefined ? /timeout|terminated/i.test(text) : TRANSIENT_CODES.has(code);
        return { ok: false, cause: text, final: !transient };
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}

export function redisProbe(settings: RedisSettings): ServiceProbe {
  const setting = redisSetting(settings);
  return {
    service: 'Redis',
    setting,
    target: describeRedis(settings),
    advice:
      setting === 'REDIS_URL'
        ? ' (host, port, password, rediss:// for TLS) and that Redis is running'
        : ` (and REDIS_PASSWORD, REDIS_TLS) and that the nodes are running`,
    async attempt(timeoutMs) {
      // Errors of this client go nowhere: the cause is reported once, in the line above.
      const { redis, lastError } = createOneShotClient(settings);
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          redis.connect().then(() => redis.ping()),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return { ok: true };
      } catch (error) {
        const { text, code } = causeOf(lastError() ?? error);
        const final = /WRONGPASS|NOAUTH|NOPERM|invalid password/i.test(text);
        return {
          ok: false,
          cause: code !== undefined && !text.includes(code) ? `${code}: ${text}` : text,
          final,
        };
      } finally {
        clearTimeout(timer);
        redis.disconnect();
      }
    },
  };
}

export interface Needs {
  postgres?: PostgresSetting;
  redis?: boolean;
}

/** Waits for what the command needs, Postgres first (the most common mistake), within STARTUP_TIMEOUT. */
export async function waitForServices(config: Config, logger: Logger, needs: Needs): Promise<void> {
  const options = { timeoutMs: config.startupTimeoutMs, logger };
  if (needs.postgres !== undefined) {
    await waitForService(postgresProbe(config.databaseUrl.reveal(), needs.postgres), options);
  }
  if (needs.redis === true) await waitForService(redisProbe(config.redis), options);
}
