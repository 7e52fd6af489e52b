import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { RetrySettings } from '../../../src/api/api-requester.js';
import { createPartnerApiParts, type PartnerApiParts } from '../../../src/api/http-partner-api.js';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { secretValues } from '../../../src/config/secret-values.js';
import { createLogger, type Logger } from '../../../src/log.js';
import { createDatabase } from '../../../src/warehouse/database.js';
import type { DB } from '../../../src/warehouse/schema.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { createTestRedis, deleteRedisPrefix, testRedisPrefix } from '../../helpers/redis.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';

// One simulator, database and Redis prefix per test file; clients ("processes") built on demand,
// each with its own Redis connection and database pool, all logging into one captured buffer.

export interface LogCapture {
  lines: string[];
  text(): string;
}

export interface ApiHarness {
  sim: RunningSimulator;
  database: TestDatabase;
  prefix: string;
  env: Record<string, string>;
  logs: LogCapture;
  config(overrides?: Record<string, string>): Config;
  logger(config: Config): Logger;
  client(options?: ClientOptions): Promise<PartnerApiParts & { config: Config }>;
  /** Every secret the simulator handed out plus any extra (tokens seen in the test). */
  secrets(): string[];
  close(): Promise<void>;
}

export interface ClientOptions {
  env?: Record<string, string>;
  retry?: Partial<RetrySettings>;
  afterRefreshCommitted?: () => void | Promise<void>;
  /** Its own connection pool, as a separate process would have. */
  ownDatabasePool?: boolean;
}

export const FAST_RETRY: Partial<RetrySettings> = {
  retries: 3,
  maxTotalMs: 20_000,
  backoff: { baseMs: 20, capMs: 200 },
};

export async function createApiHarness(label: string): Promise<ApiHarness> {
  const sim = await startSimulator({ checkIns: 2000, days: 5 });
  const database = await createTestDatabase(label);
  const prefix = testRedisPrefix(label);
  const redisConnections: Redis[] = [];
  const clients: PartnerApiParts[] = [];
  const pools: Kysely<DB>[] = [];
  const lines: string[] = [];
  const logs: LogCapture = { lines, text: () => lines.join('') };
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_PREFIX: prefix,
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    SVC_OAUTH_CLIENT_ID: sim.credentials.clientId,
    SVC_OAUTH_CLIENT_SECRET: sim.credentials.clientSecret,
    SVC_OAUTH_REFRESH_TOKEN: sim.credentials.refreshToken,
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_RATE_LIMIT_RPS: '500',
    SVC_REQUEST_TIMEOUT: '5s',
    LOG_LEVEL: 'debug',
  };
  const config = (overrides: Record<string, string> = {}) => loadConfig({ ...env, ...overrides });
  const logger = (current: Config) =>
    createLogger({
      level: 'debug',
      pretty: false,
      secrets: secretValues(current),
      destination: { write: (line: string) => void lines.push(line) },
    });
  return {
    sim,
    database,
    prefix,
    env,
    logs,
    config,
    logger,
    client(options = {}) {
      const current = config(options.env);
      const redis = createTestRedis();
      redisConnections.push(redis);
      const db = options.ownDatabasePool
        ? createDatabase({ url: database.url, maxConnections: 3 })
        : database.db;
      if (options.ownDatabasePool) pools.push(db);
      const parts = createPartnerApiParts({
        config: current,
        redis,
        tokenStore: createTokenStore(db),
        logger: logger(current),
        retry: options.retry ?? FAST_RETRY,
        afterRefreshCommitted: options.afterRefreshCommitted,
      });
      clients.push(parts);
      return Promise.resolve({ ...parts, config: current });
    },
    secrets: () => [
      sim.credentials.apiKey,
      sim.credentials.apiKeyNoScopes,
      sim.credentials.clientSecret,
      sim.credentials.refreshToken,
    ],
    async close() {
      for (const parts of clients) await parts.api.close();
      if (redisConnections[0]) await deleteRedisPrefix(redisConnections[0], prefix);
      for (const redis of redisConnections) redis.disconnect();
      for (const pool of pools) await pool.destroy();
      await database.drop();
      await sim.close();
    },
  };
}

/** Bearer and refresh tokens the simulator issued, read from the token store is not possible (sealed): the test collects them. */
export function expectNoSecrets(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((secret) => secret.length >= 6 && text.includes(secret));
}
