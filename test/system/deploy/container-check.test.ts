import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../deploy/container-files.js';
import { runProcess } from '../../support/run-process.js';

/**
 * scripts/container-check.sh where it cannot run the stack: its usage errors and its answer when
 * no Docker engine answers, the cases CI relies on to skip it rather than fail. The full check
 * (a real engine, the compose stack) is the script itself, which CI runs where an engine answers.
 */

const SCRIPT = join(ROOT, 'scripts/container-check.sh');
const nowhere = mkdtempSync(join(tmpdir(), 'fleetwatch-no-engine-'));
afterAll(() => rmSync(nowhere, { recursive: true, force: true }));

/** The script, with an engine socket that does not exist: `docker info` fails at once, whatever this machine runs. */
function check(args: string[], env: NodeJS.ProcessEnv = {}) {
  return runProcess('bash', [SCRIPT, ...args], {
    env: { DOCKER_HOST: `unix://${join(nowhere, 'docker.sock')}`, ...env },
  });
}

describe('scripts/container-check.sh', () => {
  it('exits 2 on an argument it does not know, naming the ones it does', async () => {
    const run = await check(['--fast']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "container-check: unknown argument '--fast' (expected --skip <service> or --preflight)\n",
    );
  });

  it('exits 2 on a wait limit that is not a number of seconds from 1 to 3600', async () => {
    const run = await check([], { CHECK_EVENT_TIMEOUT: '5m' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "the event timeout must be a whole number of seconds from 1 to 3600; got '5m'",
    );
  });

  it('exits 3 with one line when no Docker engine answers, before starting anything', async () => {
    for (const args of [[], ['--preflight']]) {
      const run = await check(args);
      expect(run.code, args.join(' ')).toBe(3);
      expect(run.stderr).toMatch(/^container-check: no (Docker engine answers|docker command)[^\n]*\n$/);
      expect(run.stdout).toBe('');
    }
  });
});
