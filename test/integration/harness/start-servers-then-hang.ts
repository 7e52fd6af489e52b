// Child process of servers-die-with-their-owner.test.ts: starts one server of each kind the
// harness makes, prints their dirs and pids as one JSON line, then waits to be killed.
import { startThrowawayPostgres } from '../../helpers/throwaway-postgres.js';
import { startThrowawayRedis } from '../../helpers/throwaway-redis.js';
import { startRedisSentinelSet } from '../../helpers/redis-topology.js';

const postgres = await startThrowawayPostgres();
const redis = await startThrowawayRedis();
const sentinel = await startRedisSentinelSet();
const sentinelPorts = [...sentinel.data, ...sentinel.sentinels].map((server) => server.port);
process.stdout.write(
  `${JSON.stringify({
    dirs: [postgres.dir, redis.dir, sentinel.dir],
    postgresPid: postgres.pid(),
    redisPort: redis.port,
    sentinelPorts,
  })}\n`,
);
setInterval(() => undefined, 60_000);
