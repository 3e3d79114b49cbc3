import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root: the nearest folder above this module holding fleetwatch's package.json. This
 * module runs from `src/` (tsx), `dist/` (tsc) and `dist/bin/` (the bundle `fleetwatch run` loads),
 * each at its own depth, so the root is looked up rather than written as a relative path.
 */
export const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (
      existsSync(file) &&
      (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'fleetwatch'
    )
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no fleetwatch package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
})();

/** The package version, read once from package.json. */
export const VERSION: string = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
