import { defineConfig } from 'vitest/config';

/**
 * `npm run test:resilience`: the fault-injection scenarios of test/resilience, one file after the
 * other (each runs several daemons; side by side on a small machine they would measure CPU
 * starvation instead of fleetwatch). The suite's own global setup writes RESILIENCE.md at the end.
 */
export default defineConfig({
  test: {
    include: ['test/resilience/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 60_000,
    globalSetup: ['test/setup/global-redis.ts', 'test/setup/cli.ts', 'test/resilience/global-setup.ts'],
  },
});
