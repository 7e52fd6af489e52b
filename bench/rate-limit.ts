// Shared rate limit benchmark: the simulator allows 20 requests per second per credential; three
// child processes each pull as fast as the shared limiter (SVC_RATE_LIMIT_RPS=20, one Redis) lets
// them for ~20 s. Prints achieved rate / limit (goal >= 0.9) and the share of 429s (goal <= 1%).
//
//   node --import tsx bench/rate-limit.ts [seconds]

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createPartnerApiParts } from '../src/api/http-partner-api.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/log.js';
import { createRedisClient } from '../src/redis/connection.js';
import { startSimulator } from '../src/simulator/index.js';
import { createDatabase } from '../src/warehouse/database.js';
import { createTokenStore } from '../src/warehouse/oauth-tokens.js';

const LIMIT_RPS = 20;
const PROCESSES = 3;

async function child(): Promise<void> {
  const config = loadConfig(process.env);
  const redis = createRedisClient(config.redis, { role: 'long-lived' });
  const db = createDatabase({ url: config.databaseUrl.reveal(), maxConnections: 1 }); // unused: no OAuth here
  const logger = createLogger({ level: 'warn', pretty: false });
  const { api } = createPartnerApiParts({ config, redis, tokenStore: createTokenStore(db), logger });
  const until = Date.now() + Number(process.env['BENCH_SECONDS'] ?? '20') * 1000;
  let done = 0;
  while (Date.now() < until) {
    await api.getBalance({ priority: 'low' });
    done++;
  }
  await api.close();
  await db.destroy();
  redis.disconnect();
  process.stdout.write(`${done}\n`);
}

async function main(): Promise<void> {
  // Optional duration in seconds; flags such as --full (passed by bench/main.ts) do not apply here.
  const seconds = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? '20');
  const sim = await startSimulator({ checkIns: 1000, days: 2 });
  sim.control.faults.set({ rateLimitRps: LIMIT_RPS });
  const prefix = `bench-rate-${randomBytes(4).toString('hex')}`;
  const env = {
    ...process.env,
    SVC_API_BASE_URL: sim.baseUrl,
    SVC_API_KEY: sim.credentials.apiKey,
    SVC_RATE_LIMIT_RPS: String(LIMIT_RPS),
    REDIS_PREFIX: prefix,
    BENCH_SECONDS: String(seconds),
    BENCH_CHILD: '1',
  };
  const script = fileURLToPath(import.meta.url);
  const counts = await Promise.all(
    Array.from({ length: PROCESSES }, () => {
      const worker = spawn(process.execPath, ['--import', 'tsx', script], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      return new Promise<number>((resolve, reject) =>
        worker.on('exit', (code) =>
          code === 0 ? resolve(Number(output.trim())) : reject(new Error(`child exited ${code}`)),
        ),
      );
    }),
  );
  const log = sim.control.requests.list().filter((entry) => entry.path === '/v1/balance');
  await sim.close();
  const times = log.map((entry) => Date.parse(entry.at)).sort((a, b) => a - b);
  const spanSeconds = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 1000;
  const ok = log.filter((entry) => entry.status === 200).length;
  const limited = log.filter((entry) => entry.status === 429).length;
  const achieved = ok / spanSeconds;
  process.stdout.write(
    [
      `processes            ${PROCESSES} (requests each: ${counts.join(', ')})`,
      `limit                ${LIMIT_RPS} rps (simulator token bucket per credential, SVC_RATE_LIMIT_RPS=${LIMIT_RPS})`,
      `duration             ${spanSeconds.toFixed(1)} s`,
      `requests seen        ${log.length} (200: ${ok}, 429: ${limited})`,
      `achieved / limit     ${(achieved / LIMIT_RPS).toFixed(3)} (${achieved.toFixed(2)} rps; goal >= 0.9)`,
      `429 share            ${((100 * limited) / Math.max(1, log.length)).toFixed(2)} % (goal <= 1 %)`,
      '',
    ].join('\n'),
  );
}

await (process.env['BENCH_CHILD'] === '1' ? child() : main());
