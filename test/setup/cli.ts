import { buildCli } from '../../scripts/build-cli.js';

/**
 * The system and resilience tests run `fleetwatch` as it ships: `bin/fleetwatch.js`, which loads
 * the bundle `npm run build` writes into `dist/bin/`. The tests build it once before they start
 * (about a second), so they run the sources under test, on a fresh checkout too.
 */
export default async function setup(): Promise<void> {
  await buildCli();
}
