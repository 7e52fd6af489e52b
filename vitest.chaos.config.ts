import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/** secrets.test.ts scans the logs every other chaos file wrote, so it runs last. */
class SecretsLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const last = (spec: TestSpecification) => (spec.moduleId.endsWith('secrets.test.ts') ? 1 : 0);
    return [...sorted].sort((a, b) => last(a) - last(b));
  }
}

// The chaos suite kills workers, and restarts and fails over Redis and Postgres servers it starts
// itself (test/helpers/throwaway-postgres.ts, throwaway-redis.ts, redis-topology.ts): the machine's
// services are only connected to. Files run one at a time so each has the two cores to itself
// (the kill and failover timings are bounded waits, but a starved worker still slows them).
// CHAOS_SCALE=ci (default) or full picks the sizes (test/chaos/lib/scale.ts).
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
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
