import { spawnSync } from 'node:child_process';

/**
 * Where a program of the machine is (`command -v`), or undefined when it is not installed: tests
 * that run Debian's programs (promtool, prometheus) skip, saying so, without them.
 */
export function installedCommand(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path ? path : undefined;
}
