import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/** secrets.test.ts scans the logs every other chaos file wrote, so it runs last. */
class SecretsLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const last = (spec: TestSpecification) => (spec.moduleId.endsWith(SECRETS) ? 1 : 0);
    return [...sorted].sort((a, b) => last(a) - last(b));
  }
}

const ALL = 'test/chaos/**/*.test.ts';
const SECRETS = 'test/chaos/secrets.test.ts';
// `npm test` (test/run-tests.ts) runs the chaos suite as two lanes side by side, then `last`: the
// Sentinel failover file spends ~70 % of its four minutes waiting on promotions and the partner
// API's pace, so the other lane's files fit beside it. `b` is every file the others do not name,
// so a new chaos file is never left out. Unset (`npm run test:chaos`): every file, one at a time.
const SENTINEL_LANE = [
  'test/chaos/redis-sentinel.test.ts',
  'test/chaos/api-faults.test.ts',
  'test/chaos/bad-config.test.ts',
];
const LANES: Record<string, { include: string[]; exclude: string[] }> = {
  a: { include: SENTINEL_LANE, exclude: [] },
  b: { include: [ALL], exclude: [...SENTINEL_LANE, SECRETS] },
  last: { include: [SECRETS], exclude: [] },
};
const laneName = process.env.REWARDS_CHAOS_LANE;
const lane = laneName === undefined ? { include: [ALL], exclude: [] } : LANES[laneName];
if (lane === undefined)
  throw new Error(`REWARDS_CHAOS_LANE=${laneName}: not one of ${Object.keys(LANES).join(', ')}`);

// The chaos suite kills workers, and restarts and fails over Redis and Postgres servers it starts
// itself (test/helpers/throwaway-postgres.ts, throwaway-redis.ts, redis-topology.ts): the machine's
// services are only connected to. Within a lane, files run one at a time (the kill and failover
// timings are bounded waits, but a starved worker still slows them).
// CHAOS_SCALE=ci (default) or full picks the sizes (test/chaos/lib/scale.ts).
export default defineConfig({
  test: {
    include: lane.include,
    exclude: ['node_modules/**', ...lane.exclude],
    globalSetup: ['test/helpers/global-setup.ts', 'test/chaos/lib/global-setup.ts'],
    fileParallelism: false,
    pool: 'forks',
    maxWorkers: 1,
    env: { SIMULATOR_RHYTHM: 'flat' }, // as in vitest.config.ts
    sequence: { sequencer: SecretsLastSequencer },
    testTimeout: 1_800_000,
    hookTimeout: 180_000,
  },
});
