// Starts a Redis topology on loopback ports for trying Sentinel or Cluster by hand, prints the
// settings a `rewards-etl` process needs, and stops it on Ctrl-C:
//
//   node --import tsx test/helpers/redis-topology-cli.ts cluster
//   node --import tsx test/helpers/redis-topology-cli.ts sentinel

import { startRedisCluster, startRedisSentinelSet, type RedisTopology } from './redis-topology.js';

const kind = process.argv[2];
if (kind !== 'cluster' && kind !== 'sentinel') {
  process.stderr.write('usage: redis-topology-cli.ts cluster|sentinel\n');
  process.exit(2);
}
const topology: RedisTopology =
  kind === 'cluster' ? await startRedisCluster() : await startRedisSentinelSet();
process.stdout.write(
  `# ${kind} up; settings for rewards-etl (Ctrl-C stops and deletes it):\n` +
    Object.entries(topology.env)
      .map(([name, value]) => `${name}=${value}\n`)
      .join(''),
);
await new Promise<void>((resolve) => {
  process.once('SIGINT', resolve);
  process.once('SIGTERM', resolve);
});
await topology.stop();
