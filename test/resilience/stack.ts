import { Redis } from 'ioredis';
import { afterAll, type TestContext } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { EventLog } from '../../src/store/event-log.js';
import { newSecret } from '../notifiers/receivers/webhook/helpers.js';
import {
  type DaemonConfigOptions,
  type DaemonExit,
  printOnFailure,
  ReplicaSet,
  removeConfigFiles,
  writeDaemonConfig,
} from '../support/daemon-process.js';
import { ChangeDriver, FleetScript, type FleetScriptOptions } from '../support/fleet-script.js';
import { deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';
import {
  addQuietFleet,
  discoveredEvents,
  type FleetIds,
  type FleetShape,
  fleetIds,
  Scenario,
  seededRandom,
  waitForEntityBaseline,
  waitForMembershipBaseline,
} from '../support/scenario.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { resilienceSeed } from './report.js';

/**
 * The system under test for one resilience scenario: a simulated fleet, `fleetwatch run` replicas
 * (child processes) on one Redis prefix, and a signed-webhook receiver that every event is routed
 * to, grouped by type with short windows. The scenario injects its faults around it.
 */

export const RECEIVER = 'hooks';

export interface StackOptions {
  /** Added to the suite's seed: each scenario makes its own random choices, replayable by seed. */
  seedOffset: number;
  /** The suite's shared Redis unless given (a private server's URL). */
  redisUrl?: string;
  /** How long simulated power commands take (default 3 s). */
  powerDelayMs?: number;
  /** Daemon settings besides the upstream, Redis and notification sections. */
  daemon?: Omit<DaemonConfigOptions, 'upstreamUrl' | 'redisUrl' | 'prefix'>;
  /** The webhook receiver's `retry_schedule` (default: short, [0s, 250ms, 500ms, 1s, 2s]). */
  retrySchedule?: readonly string[];
  /** The receiver's request time-out (default 2s). */
  receiverTimeout?: string;
}

export interface Survival {
  survived: boolean;
  text: string;
}

export class Stack {
  readonly startedAt = Date.now();
  readonly seed: number;
  readonly random: () => number;
  readonly prefix = uniquePrefix();
  readonly secret: string;
  readonly sim: Simulator;
  readonly receiver: WebhookReceiver;
  readonly admin: Redis;
  readonly log: EventLog;
  readonly scenario: Scenario;
  readonly replicas: ReplicaSet;
  readonly configFile: string;
  readonly redisUrl: string;
  readonly #journal: string[] = [];

  private constructor(sim: Simulator, receiver: WebhookReceiver, secret: string, options: StackOptions) {
    this.sim = sim;
    this.secret = secret;
    this.seed = resilienceSeed() + options.seedOffset;
    this.random = seededRandom(this.seed);
    this.receiver = receiver;
    this.redisUrl = options.redisUrl ?? redisUrl();
    // Reconnects on its own: the scenario may restart the Redis it talks to.
    this.admin = new Redis(this.redisUrl, { maxRetriesPerRequest: 1 });
    this.admin.on('error', () => {});
    this.log = new EventLog({ redis: this.admin, prefix: this.prefix });
    this.scenario = new Scenario(this.log, { stepTimeoutMs: 60_000 });
    const daemon = options.daemon ?? {};
    this.configFile = writeDaemonConfig({
      ...daemon,
      upstreamUrl: sim.url,
      redisUrl: this.redisUrl,
      prefix: this.prefix,
      extra: {
        receivers: [
          {
            kind: 'webhook',
            name: RECEIVER,
            url: receiver.url,
            secrets: [this.secret],
            timeout: options.receiverTimeout ?? '2s',
            retry_schedule: [...(options.retrySchedule ?? ['0s', '250ms', '500ms', '1s', '2s'])],
          },
        ],
        // Every event to the receiver; a burst of one type is one batch.
        notifications: {
          route: { receiver: RECEIVER, group_by: ['type'], group_wait: '500ms', group_interval: '1s' },
        },
        ...daemon.extra,
      },
    });
    this.replicas = new ReplicaSet(this.configFile);
  }

  static async open(options: StackOptions): Promise<Stack> {
    const sim = await startSimulator({
      vehicles: 0,
      robots: 0,
      seed: 23,
      powerDelayMs: options.powerDelayMs ?? 3_000,
      behaviours: false,
    });
    const secret = newSecret();
    const receiver = await WebhookReceiver.start({ secret });
    return new Stack(sim, receiver, secret, options);
  }

  /**
   * Starts `replicas` daemons on an empty fleet, then adds the fleet once their first lists are
   * committed (so each entity is discovered exactly once) and waits until every entity's
   * per-signal baseline is in place: from then on, a change in the simulator is a change.
   */
  async learnFleet(shape: FleetShape, replicas: number, timeoutMs = 60_000): Promise<FleetIds> {
    this.replicas.start(replicas);
    await waitForMembershipBaseline(this.admin, this.prefix, { timeoutMs });
    const ids = fleetIds(shape);
    await this.scenario.step(
      'discover the fleet',
      () => addQuietFleet(this.sim.control, shape),
      discoveredEvents(ids),
      { timeoutMs },
    );
    await waitForEntityBaseline(this.admin, this.prefix, ids, { timeoutMs });
    return ids;
  }

  /** Keeps `line` (with the time since the start) for the account printed when the test fails. */
  note(line: string): void {
    this.#journal.push(`+${((Date.now() - this.startedAt) / 1000).toFixed(2)}s ${line}`);
  }

  /** Makes random changes to the fleet until `stop()` (see fleet-script.ts), noting each one. */
  driveChanges(ids: FleetIds, options: FleetScriptOptions = {}): ChangeDriver {
    const script = new FleetScript(this.sim.control, ids, this.random, options);
    return new ChangeDriver(this.scenario, script, {
      onChange: (change) => this.note(`change: ${change.label}`),
    }).start();
  }

  /**
   * Whether every process the scenario did not kill on purpose ran to the end: none exited on its
   * own, and each one still running stops with exit status 0 on SIGTERM.
   */
  async finish(): Promise<Survival> {
    const { replicas } = this;
    const crashed = replicas.crashed.map(
      (daemon) => `${daemon.name} exited by itself (code ${daemon.exit?.code}, ${daemon.exit?.signal})`,
    );
    const killed = replicas.all.filter((daemon) => !daemon.alive && !daemon.exitedUnexpectedly).length;
    const running = replicas.running.length;
    let exits: DaemonExit[] = [];
    let stopProblem: string | undefined;
    try {
      exits = await replicas.stopAll(30_000);
    } catch (error) {
      stopProblem = (error as Error).message;
    }
    const clean = exits.filter((exit) => exit.code === 0).length;
    const survived = crashed.length === 0 && !stopProblem && running > 0 && clean === running;
    const parts = [
      `${running} running at the end`,
      `${clean} of ${running} exited 0 on SIGTERM`,
      ...(killed > 0 ? [`${killed} SIGKILLed on purpose`] : []),
      ...crashed,
      ...(stopProblem ? [stopProblem] : []),
    ];
    return { survived, text: parts.join(', ') };
  }

  /** The journal and what the daemons said (the last lines of each), for a failing test. */
  account(lastLines = 60): string {
    return `--- journal (seed ${this.seed}) ---\n${this.#journal.join('\n')}\n${this.replicas.output(lastLines)}`;
  }

  async close(): Promise<void> {
    await this.replicas.killAll();
    await this.receiver.close().catch(() => {});
    await this.sim.close();
    await deletePrefixKeys(this.admin, this.prefix).catch(() => 0);
    this.admin.disconnect();
    removeConfigFiles();
  }
}

/**
 * The test file's stack: opened by the test, printed when it fails, closed after the file's tests
 * whatever happened.
 */
export function stackPerFile(): {
  open(context: TestContext, options: StackOptions, more?: () => string): Promise<Stack>;
} {
  let opened: Stack | undefined;
  afterAll(async () => {
    await opened?.close();
  });
  return {
    async open(context, options, more) {
      const stack = await Stack.open(options);
      opened = stack;
      printOnFailure(context, () => `${stack.account()}${more ? `\n${more()}` : ''}`);
      return stack;
    },
  };
}
