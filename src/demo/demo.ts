import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { maskUrlPassword, registerConfigSecrets } from '../config/mask.js';
import { type Daemon, startDaemon } from '../daemon/index.js';
import type { Logger } from '../log/logger.js';
import { secrets } from '../log/secrets.js';
import { type Simulator, startSimulator } from '../simulator/index.js';
import { createUpstream, type Upstream } from '../upstream/index.js';
import { DEMO_BEHAVIOURS, DEMO_CLIENT, demoConfig } from './config.js';
import { type DemoRedis, deletePrefixKeys, findRedis } from './redis.js';
import { castDemo, runDemoScript } from './script.js';

export interface DemoOptions {
  /** Preferred simulator port; when taken (and not 0), a free one is used instead. */
  port: number;
  vehicles: number;
  robots: number;
  seed: number;
  /** Run the scripted sequence (power-on, robot outage, VPN flap) once the fleet has been seen. */
  script: boolean;
  /** Log level of fleetwatch's own log lines (stderr). */
  logLevel: string;
  env: NodeJS.ProcessEnv;
  /** Notifications and narration. */
  stdout: Writable;
  logger: Logger;
  /** Stops the demo (Ctrl-C). */
  signal: AbortSignal;
}

const SIMULATOR_PORT = 8080;
/** fleetwatch's usual HTTP port: the demo takes it when it is free, as `fleetwatch run` would. */
const HTTP_PORT = 9464;

/** Whether nothing listens on `port` on loopback right now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function startDemoSimulator(options: DemoOptions, logger: Logger): Promise<Simulator> {
  const settings = {
    host: '127.0.0.1',
    seed: options.seed,
    vehicles: options.vehicles,
    robots: options.robots,
    clients: [{ id: DEMO_CLIENT.id, secret: DEMO_CLIENT.secret }],
    powerDelayMs: 3_000,
    behaviours: DEMO_BEHAVIOURS,
    logger,
  };
  try {
    return await startSimulator({ ...settings, port: options.port });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || options.port === 0) throw error;
    return startSimulator({ ...settings, port: 0 });
  }
}

/** Resolves once the daemon has observed vehicles, their power and robot health at least once. */
async function fleetSeen(daemon: Daemon, signal: AbortSignal, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const observed = (poller: 'vehicles' | 'power' | 'robot_health') =>
    (daemon.counters.totals.get(poller)?.observed ?? 0) > 0;
  while (!signal.aborted && Date.now() < deadline) {
    if (observed('vehicles') && observed('power') && observed('robot_health')) return;
    await delay(200, undefined, { signal }).catch(() => {});
  }
}

/**
 * `fleetwatch demo`: the simulator, the daemon and its console receivers in one process, against a
 * Redis found or started for the purpose (see `redis.ts`), under a key prefix of its own
 * (`demo-<random>`) that is deleted on the way out. Resolves after Ctrl-C once everything has
 * stopped; throws `DemoRedisError` when there is no Redis.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const { stdout, signal, logger } = options;
  const say = (line: string) => stdout.write(`${line}\n`);
  const redis: DemoRedis = await findRedis(options.env);
  const prefix = `demo-${randomBytes(4).toString('hex')}`;
  let simulator: Simulator | undefined;
  let daemon: Daemon | undefined;
  let upstream: Upstream | undefined;
  let script: Promise<void> = Promise.resolve();
  const stopScript = new AbortController();
  try {
    if (signal.aborted) return;
    const sim = await startDemoSimulator(options, logger.child({ component: 'simulator' }));
    simulator = sim;
    const config = demoConfig({
      simulatorUrl: sim.url,
      redisUrl: redis.url,
      prefix,
      logLevel: options.logLevel,
      httpPort: (await portFree(HTTP_PORT)) ? HTTP_PORT : 0,
    });
    registerConfigSecrets(config, secrets);
    const cast = options.script ? castDemo(sim) : undefined;

    say(
      `fleetwatch demo: ${options.vehicles} simulated vehicles and ${options.robots} robots, watched by fleetwatch;` +
        ' every notification is printed below.',
    );
    say(`  simulator  ${simulator.url} (client "${DEMO_CLIENT.id}", secret "${DEMO_CLIENT.secret}")`);
    if (simulator.url.endsWith(`:${SIMULATOR_PORT}`)) {
      say(
        '             try, in another terminal: FLEETWATCH_CONFIG=examples/simulator.yaml npx fleetwatch vehicles',
      );
    }
    const where = { env: 'REDIS_URL', local: 'local server', private: 'started for this demo' }[redis.source];
    say(`  redis      ${maskUrlPassword(redis.url)} (${where}), keys under {${prefix}}, deleted on exit`);
    say('  routes     warnings and criticals → "alerts", grouped by event type, group_wait 2s;');
    say('             info-level changes → "changes", quieter: group_wait 5s, then at most every 10s');

    daemon = startDaemon(config, { logger, signal });
    const address = await daemon.http?.listening;
    if (address) {
      say(`  console    ${address}/ (read-only: the demo sets no API token)`);
      say(`  http       ${address}/metrics (Prometheus), /healthz, /readyz, /api, /docs`);
    }
    say('  Ctrl-C stops the demo.');
    say('');
    if (cast) {
      upstream = createUpstream({ config: config.upstream, logger });
      const fleet = upstream.fleet;
      const running = daemon;
      const scriptSignal = AbortSignal.any([signal, stopScript.signal]);
      script = fleetSeen(running, scriptSignal).then(() =>
        runDemoScript({ simulator: sim, fleet, cast, say, signal: scriptSignal }),
      );
      script.catch((error: unknown) => {
        logger.error({ err: (error as Error).message }, 'demo script failed');
      });
    }
    await daemon.stopped;
  } finally {
    stopScript.abort();
    await script.catch(() => {});
    await daemon?.stop();
    await upstream?.close().catch(() => {});
    await simulator?.close();
    let cleaned = false;
    try {
      const left = await deletePrefixKeys(redis.url, prefix);
      cleaned = left === 0;
      if (!cleaned) logger.warn({ prefix, left }, 'some demo keys could not be deleted');
    } catch (error) {
      logger.warn({ prefix, err: (error as Error).message }, 'could not delete the demo keys');
    }
    await redis.stop();
    say(
      cleaned
        ? `fleetwatch demo stopped; the keys under {${prefix}} are deleted.`
        : `fleetwatch demo stopped; delete what is left under {${prefix}} by hand.`,
    );
  }
}
