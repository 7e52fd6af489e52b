import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/chaos/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Only a hang catcher: a test's own bound is the sum of the bounded waits it makes. Integration
    // tests start CLI processes and workers (`tsx` alone took 10-14 s a start on a machine shared
    // 6-7 times over in issue 37's runs), so 60 s failed tests that were only slow.
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    // Visits spread evenly over the venues' local day, so a window anchored at the real clock holds
    // as many rows whatever the hour; the rhythm's own tests ask for `daily` (issue 37).
    env: { SIMULATOR_RHYTHM: 'flat' },
  },
});
