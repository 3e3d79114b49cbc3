import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildCli } from '../../../scripts/build-cli.js';
import { healthcheckCommand, ROOT, read, services } from '../../deploy/container-files.js';
import { daemonConfig } from '../../support/daemon-process.js';
import { freePort } from '../../support/private-redis.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { runProcess } from '../../support/run-process.js';

/**
 * The commands the image runs, run here without a Docker engine, from a copy laid out like the
 * image's /app (built with the image's build command). The Dockerfile and the compose file
 * themselves are checked in test/deploy/containers.test.ts.
 */

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitUntil(probe: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

/** The health check command with its port (9464 in the image) pointed at `port`. */
function healthcheckOn(command: readonly string[], from: number, port: number): string[] {
  return command.map((part) => part.replace(`127.0.0.1:${from}/`, `127.0.0.1:${port}/`));
}

async function stopProcess(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM') {
  if (!child || child.exitCode !== null || child.signalCode !== null) return undefined;
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code, how] = await exited;
  clearTimeout(timer);
  return { code, signal: how };
}

describe('the commands the image runs, outside it', () => {
  /** A copy of the image's /app: package files, dist (built as `npm run build` does), bin, openapi, schemas. */
  let app: string;
  let build: { metafile?: Metafile; error?: unknown };

  beforeAll(async () => {
    app = mkdtempSync(join(tmpdir(), 'fleetwatch-image-'));
    for (const entry of ['package.json', 'package-lock.json', 'bin', 'openapi', 'schemas']) {
      cpSync(join(ROOT, entry), join(app, entry), { recursive: true });
    }
    // The image runs `npm run build`: the command's bundle, the same, into the copy.
    build = await buildCli(join(app, 'dist', 'bin')).then(
      (metafile) => ({ metafile }),
      (error: unknown) => ({ error }),
    );
    // Resolution of packages, as from /app/node_modules (dev packages too: see the import check).
    symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'), 'dir');
  }, 200_000);

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('builds with the build stage command', () => {
    expect(build.error).toBeUndefined();
    expect(existsSync(join(app, 'dist/bin/fleetwatch.js'))).toBe(true);
  });

  it('needs only production dependencies at run time (npm ci --omit=dev)', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const allowed = new Set(Object.keys(pkg.dependencies));
    const builtins = new Set(builtinModules);
    // What the bundle imports from outside itself, as esbuild resolved it.
    const outside = Object.values(build.metafile?.outputs ?? {}).flatMap((output) =>
      output.imports.filter((entry) => entry.external).map((entry) => entry.path),
    );
    const packages = new Set(
      outside
        .filter((specifier) => !specifier.startsWith('node:') && !builtins.has(specifier.split('/')[0]!))
        .map((specifier) =>
          specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!,
        ),
    );
    expect(packages.size).toBeGreaterThan(0);
    expect([...packages].filter((name) => !allowed.has(name))).toEqual([]);
    // Required by name, which the bundler cannot see (src/log/logger.ts).
    expect(allowed.has('pino-pretty')).toBe(true);
  });

  it('`node bin/fleetwatch.js run --help` works from the image layout', async () => {
    const result = await runProcess(process.execPath, ['bin/fleetwatch.js', 'run', '--help'], { cwd: app });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Usage: fleetwatch run');
  });

  it('the HEALTHCHECK one-liner fails when nothing answers', async () => {
    const port = await freePort();
    const [command, ...args] = healthcheckOn(healthcheckCommand!, 9464, port);
    const result = await runProcess(command === 'node' ? process.execPath : command!, args, {
      timeoutMs: 10_000,
    });
    expect(result.code).toBe(1);
  });

  it("the simulator's compose command serves, and its compose health check passes", async () => {
    const port = await freePort();
    const command = (services.simulator!.command ?? []).map((arg, index, all) =>
      all[index - 1] === '--port' ? String(port) : all[index - 1] === '--host' ? '127.0.0.1' : arg,
    );
    const simulator = spawn(process.execPath, ['bin/fleetwatch.js', ...command], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      expect(await waitUntil(() => listening(port), 20_000), `simulator listening on ${port}`).toBe(true);
      const test = services.simulator!.healthcheck?.test as string[];
      expect(test[0]).toBe('CMD');
      const [bin, ...args] = healthcheckOn(test.slice(1), 8080, port);
      const result = await runProcess(bin === 'node' ? process.execPath : bin!, args, { timeoutMs: 10_000 });
      expect(result.code, result.stderr).toBe(0);
    } finally {
      const exit = await stopProcess(simulator, 'SIGINT');
      expect(exit?.code).toBe(0);
    }
  }, 60_000);

  it('the HEALTHCHECK one-liner passes against `fleetwatch run` serving HTTP', async (context) => {
    const upstreamPort = await freePort();
    const httpPort = await freePort();
    const prefix = uniquePrefix();
    const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-image-config-'));
    const simulator = spawn(
      process.execPath,
      ['bin/fleetwatch.js', 'simulate', '--port', String(upstreamPort), '--vehicles', '3', '--robots', '1'],
      { cwd: app, stdio: 'ignore' },
    );
    let daemon: ChildProcess | undefined;
    let daemonOutput = '';
    try {
      expect(
        await waitUntil(() => listening(upstreamPort), 20_000),
        `simulator listening on ${upstreamPort}`,
      ).toBe(true);
      const document = daemonConfig({
        upstreamUrl: `http://127.0.0.1:${upstreamPort}`,
        redisUrl: redisUrl(),
        prefix,
        interval: '2s',
        extra: { http: { host: '127.0.0.1', port: httpPort } },
      });
      const configFile = join(dir, 'fleetwatch.yaml');
      writeFileSync(configFile, stringify(document));
      daemon = spawn(process.execPath, ['bin/fleetwatch.js', 'run'], {
        cwd: app,
        env: { ...process.env, FLEETWATCH_CONFIG: configFile, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [daemon.stdout, daemon.stderr]) {
        stream?.setEncoding('utf8').on('data', (chunk: string) => {
          daemonOutput += chunk;
        });
      }
      const serving = await waitUntil(() => daemon?.exitCode === null && listening(httpPort), 20_000);
      if (!serving) {
        expect(daemon.exitCode, daemonOutput).toBeNull();
        context.skip(`fleetwatch run does not serve HTTP on http.port yet (nothing listens on ${httpPort})`);
        return;
      }
      const [command, ...args] = healthcheckOn(healthcheckCommand!, 9464, httpPort);
      const healthy = await waitUntil(
        async () => (await runProcess(process.execPath, args, { timeoutMs: 10_000 })).code === 0,
        20_000,
      );
      expect(command).toBe('node');
      expect(healthy, daemonOutput).toBe(true);
      const exit = await stopProcess(daemon);
      expect(exit, daemonOutput).toEqual({ code: 0, signal: null });
    } finally {
      await stopProcess(daemon, 'SIGKILL');
      await stopProcess(simulator, 'SIGINT');
      rmSync(dir, { recursive: true, force: true });
      const redis = connect();
      await deletePrefixKeys(redis, prefix);
      redis.disconnect();
    }
  }, 90_000);
});
