import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** What the CLI's stdin holds: nothing (and not a terminal) unless a test says otherwise. */
export interface CliInput {
  /** Written to stdin, then stdin ends. */
  text?: string;
  /** stdin claims to be a terminal (a person who can answer a question). */
  tty?: boolean;
}

/** Runs the CLI in this process, as `fleetwatch <args>` would, capturing both streams. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  signal?: AbortSignal,
  /** Called with everything printed so far, after every write: lets a test await a line. */
  onOutput?: (printed: { stdout: string; stderr: string }) => void,
  input: CliInput = {},
): Promise<CliRun> {
  const stdin = Object.assign(new PassThrough(), { isTTY: input.tty === true });
  stdin.end(input.text ?? '');
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
    stdin,
    stdout,
    stderr,
    env,
    signal: signal ?? new AbortController().signal,
  });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** One folder for the config files this worker writes, removed when the worker exits. */
let configFolder: string | undefined;
let configFiles = 0;

function configFolderOf(): string {
  if (configFolder === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'fleetwatch-cli-'));
    configFolder = folder;
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  }
  return configFolder;
}

/** Writes a config file pointing every upstream address at `url`; the secret comes from FLEET_SECRET. */
export function writeSimulatorConfig(url: string, extra = ''): string {
  configFiles += 1;
  const file = join(configFolderOf(), `fleetwatch-${configFiles}.yaml`);
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
