import { buildConsole } from '../../scripts/build-console.js';

/**
 * The console's page and script are served from `dist/console/`, which `npm run build` writes. The
 * tests build it once before they start (about a tenth of a second), so `npm test` on a fresh
 * checkout serves the console of the sources under test.
 */
export default async function setup(): Promise<void> {
  await buildConsole();
}
