import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * `npm test` runs two projects, the unit tests first, then the system tests:
 *
 * - **unit** (`npm run test:unit`, the edit loop): everything under test/ outside test/system/.
 *   In-process tests; real Redis and servers on loopback are fine, child processes are not. The
 *   files share their workers' module cache (`isolate: false`): importing the daemon's module graph
 *   again for each of a hundred files costs more than most files' tests take. A unit test therefore
 *   leaves no process-wide state behind (no mocks, fake timers or environment changes it does not
 *   undo).
 * - **system** (`npm run test:system`): test/system/, tests that start processes: `fleetwatch run`
 *   and the demo as child processes, private redis-servers, the compiled image layout.
 *
 * A new test file lands in its project by where it is put. The fault-injection scenarios of
 * test/resilience take minutes and run on their own (`npm run test:resilience`).
 */
const timeouts = { testTimeout: 20_000, hookTimeout: 30_000 };
/**
 * A unit test spends most of its time waiting on Redis, loopback sockets and timers, not on CPU:
 * two files per core at once (at most 8). The system tests keep vitest's default (cores - 1):
 * their daemons need the CPU.
 */
const UNIT_WORKERS = Math.min(8, 2 * availableParallelism());

export default defineConfig({
  test: {
    // Set on the root only: it runs once, and every project sees what it provides (the Redis URL).
    globalSetup: ['test/setup/global-redis.ts', 'test/setup/console.ts', 'test/setup/cli.ts'],
    projects: [
      {
        test: {
          ...timeouts,
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/system/**', 'test/resilience/**'],
          isolate: false,
          maxWorkers: UNIT_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...timeouts,
          name: 'system',
          include: ['test/system/**/*.test.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
