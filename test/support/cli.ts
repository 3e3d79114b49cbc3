import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process, as `fleetwatch <args>` would, capturing both streams. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  signal?: AbortSignal,
  /** Called with everything printed so far, after every write: lets a test await a line. */
  onOutput?: (printed: { stdout: string; stderr: string }) => void,
): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  const report = () => onOutput?.({ stdout: out.join(''), stderr: err.join('') });
  stdout.on('data', (chunk) => {
    out.push(String(chunk));
    report();
  });
  stderr.on('data', (chunk) => {
    err.push(String(chunk));
    report();
  });
  const code = await main(['node', 'fleetwatch', ...args], {
    stdout,
    stderr,
    env,
    signal: signal ?? new AbortController().signal,
  });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** Writes a config file pointing every upstream address at `url`; the secret comes from FLEET_SECRET. */
export function writeSimulatorConfig(url: string, extra = ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-cli-'));
  const file = join(dir, 'fleetwatch.yaml');
  writeFileSync(
    file,
    `upstream:
  base_url: ${url}
  robot_base_url: ${url}
  auth_url: ${url}
  client_id: fleetwatch-demo
  client_secret: \${FLEET_SECRET}
  http:
    retry_base_delay: 5ms
    retry_max_delay: 50ms
    request_timeout: 2s
${extra}`,
  );
  return file;
}
