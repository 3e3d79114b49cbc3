import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Minutes of fault injection: `npm run test:resilience` runs them (vitest.resilience.config.ts).
    exclude: [...configDefaults.exclude, 'test/resilience/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    globalSetup: ['test/setup/global-redis.ts'],
  },
});
