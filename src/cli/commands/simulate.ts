import { type Command, InvalidArgumentError, Option } from 'commander';
import { CONTROL_FROM_LIMIT, parseControlFrom } from '../../simulator/control-access.js';
import { SEED_LIMITS } from '../../simulator/seed.js';
import { countOption, durationOption, portArgument, SEED_RANGE } from '../arguments.js';
import type { CliContext } from '../context.js';
import { listenError } from '../errors.js';
import { writeLine } from '../io.js';

interface SimulateOptions {
  host: string;
  port: number;
  vehicles: number;
  robots: number;
  seed: number;
  clientId: string;
  clientSecret: string;
  powerDelay: number;
  behaviours: boolean;
  behaviourInterval: number;
  tokenTtl: number;
  expiresIn: boolean;
  jwt: boolean;
  controlFrom: string[];
}

/** `--control-from`: a bad network is a usage error (exit 2) naming it. */
function controlFromArgument(value: string): string[] {
  try {
    return parseControlFrom(value);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`);
  }
}

const FLEET_SIZE = { min: 0, max: SEED_LIMITS.entities };

export function registerSimulateCommand(program: Command, context: CliContext): void {
  program
    .command('simulate')
    .description('serve a simulated fleet service (token issuer, /v1 vehicles, robot gateway) on loopback')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', portArgument, 8080)
    .addOption(countOption('--vehicles <n>', 'number of vehicles', FLEET_SIZE, 20))
    .addOption(countOption('--robots <n>', 'number of robots', FLEET_SIZE, 5))
    .addOption(
      countOption(
        '--seed <n>',
        'seed of the generated fleet; the same seed gives the same fleet',
        SEED_RANGE,
        1,
      ),
    )
    .option('--client-id <id>', 'client id the token issuer accepts', 'fleetwatch-demo')
    .option('--client-secret <secret>', 'client secret the token issuer accepts', 'demo-secret')
    .addOption(
      durationOption(
        '--power-delay <duration>',
        'how long a power command takes to complete',
        { min: 0, max: 3_600_000 },
        3_000,
      ),
    )
    .addOption(
      durationOption(
        '--token-ttl <duration>',
        'lifetime of issued tokens',
        { min: 1_000, max: 86_400_000 },
        3_600_000,
      ),
    )
    .option('--no-expires-in', 'issue tokens without expires_in (the spec leaves the lifetime open)')
    .option('--jwt', 'issue JWTs carrying iat and exp instead of opaque tokens')
    .addOption(
      new Option(
        '--control-from <networks>',
        `comma-separated networks whose callers may use the control API: CIDRs, addresses or loopback (at most ${CONTROL_FROM_LIMIT}), e.g. loopback,172.30.0.0/16`,
      )
        .argParser(controlFromArgument)
        .default(['loopback'], 'loopback'),
    )
    .option('--no-behaviours', 'keep the fleet still: no VPN flaps, health changes or lease changes')
    .addOption(
      durationOption(
        '--behaviour-interval <duration>',
        'how often the fleet changes by itself',
        { min: 100, max: 3_600_000 },
        5_000,
      ),
    )
    .addHelpText(
      'after',
      '\nThe control API under /_sim/ sets any state and injects faults; see the README.\nIt has no authentication: it answers loopback callers only unless --control-from names more.',
    )
    .action(async (options: SimulateOptions) => {
      const { io } = context;
      // Imported here: every other command (the daemon above all) runs without the simulator.
      const { startSimulator } = await import('../../simulator/server.js');
      const simulator = await startSimulator({
        host: options.host,
        port: options.port,
        seed: options.seed,
        vehicles: options.vehicles,
        robots: options.robots,
        clients: [{ id: options.clientId, secret: options.clientSecret }],
        powerDelayMs: options.powerDelay,
        issuer: {
          tokenTtlSeconds: Math.max(0.1, options.tokenTtl / 1000),
          sendExpiresIn: options.expiresIn,
          jwt: options.jwt === true,
        },
        behaviours: options.behaviours ? { intervalMs: options.behaviourInterval } : false,
        logger: context.logger('long-running'),
        controlFrom: options.controlFrom,
      }).catch((error: unknown) => {
        throw listenError(error, options) ?? error;
      });
      writeLine(
        io.stderr,
        `simulated fleet of ${options.vehicles} vehicles and ${options.robots} robots at ${simulator.url}` +
          ` (client id "${options.clientId}"); Ctrl-C stops it`,
      );
      writeLine(io.stdout, simulator.url);
      await new Promise<void>((resolve) => {
        if (io.signal.aborted) resolve();
        io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await simulator.close();
    });
}
