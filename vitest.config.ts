import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/chaos/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Integration tests share two cores with Postgres, Redis and the simulator.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // Visits spread evenly over the venues' local day, so a window anchored at the real clock holds
    // as many rows whatever the hour; the rhythm's own tests ask for `daily` (issue 37).
    env: { SIMULATOR_RHYTHM: 'flat' },
  },
});
