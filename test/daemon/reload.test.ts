import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { type Daemon, startDaemon } from '../../src/daemon/index.js';
import { ConfigReloader, type ReloadPart } from '../../src/daemon/reload.js';
import { closeQuietly } from '../../src/lib/redis-connection.js';
import { notifyQueueName } from '../../src/queues/names.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { bullPrefix } from '../../src/store/keys.js';
import { newSecret } from '../notifiers/receivers/webhook/helpers.js';
import { testConfig } from '../pollers/harness.js';
import { captureJsonLog } from '../support/json-log.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../support/redis.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The reloader (daemon/reload.ts): a file that cannot be used changes nothing, a part that cannot
 * prepare its change keeps every part from changing, restart-only settings keep their value; and
 * a real daemon takes routes, receivers and detector thresholds live.
 */

const silent = pino({ enabled: false });

describe('ConfigReloader', () => {
  const base = testConfig('http://127.0.0.1:1', 'fw-reload-unit');

  /** Parts that record what they were asked to do. */
  function recording(failAt?: string) {
    const calls: string[] = [];
    const part = (name: string): ReloadPart => ({
      name,
      prepare: () => {
        if (name === failAt) throw new Error('cannot build it');
        calls.push(`prepare ${name}`);
        return {
          commit: () => {
            calls.push(`commit ${name}`);
          },
          discard: () => {
            calls.push(`discard ${name}`);
          },
        };
      },
    });
    return { calls, parts: [part('first'), part('second')] };
  }

  it('refuses a file that cannot be used with the lines config check prints, and changes nothing', async () => {
    const { calls, parts } = recording();
    const outcomes: boolean[] = [];
    const log = captureJsonLog();
    const reloader = new ConfigReloader({
      config: base,
      load: () => {
        throw new ConfigError('fleetwatch.yaml', [
          'worker.concurrency: expected a whole number between 1 and 256',
        ]);
      },
      parts,
      logger: log.logger,
      onResult: (ok) => outcomes.push(ok),
    });
    const result = await reloader.reload('api');
    expect(result).toEqual({
      ok: false,
      reason: 'invalid',
      problems: ['fleetwatch.yaml: worker.concurrency: expected a whole number between 1 and 256'],
    });
    expect(calls).toEqual([]);
    expect(reloader.config).toBe(base);
    expect(outcomes).toEqual([false]);
    expect(log.lines.find((line) => line.level === 50)).toMatchObject({
      msg: 'config reload refused: the file is invalid; the config in force is kept',
      problems: result.ok ? [] : result.problems,
    });
  });

  it('discards what was prepared when a part cannot prepare, and commits nothing', async () => {
    const { calls, parts } = recording('second');
    const next = structuredClone(base);
    next.detectors.vpn.failure_threshold = 7;
    const reloader = new ConfigReloader({ config: base, load: () => next, parts, logger: silent });
    const result = await reloader.reload('signal');
    expect(result).toEqual({ ok: false, reason: 'failed', problems: ['second: cannot build it'] });
    expect(calls).toEqual(['prepare first', 'discard first']);
    expect(reloader.config).toBe(base);
  });

  it('applies the live sections in part order, keeps restart-only settings and names them', async () => {
    const { calls, parts } = recording();
    const next = structuredClone(base);
    next.detectors.vpn.failure_threshold = 7;
    next.worker.concurrency = 99;
    next.redis.prefix = 'fw-reload-elsewhere';
    const log = captureJsonLog();
    const reloader = new ConfigReloader({ config: base, load: () => next, parts, logger: log.logger });
    const result = await reloader.reload('signal');
    expect(result).toEqual({
      ok: true,
      status: 'reloaded',
      changed: ['detectors.vpn.failure_threshold'],
      receivers: { added: [], removed: [], changed: [] },
      needsRestart: ['redis.prefix', 'worker.concurrency'],
    });
    expect(calls).toEqual(['prepare first', 'prepare second', 'commit first', 'commit second']);
    expect(reloader.config.detectors.vpn.failure_threshold).toBe(7);
    expect(reloader.config.worker.concurrency).toBe(base.worker.concurrency);
    expect(reloader.config.redis.prefix).toBe('fw-reload-unit');
    expect(log.lines.map((line) => line.msg)).toContain(
      'needs a restart: redis.prefix, worker.concurrency (the values in force are kept until then)',
    );
  });

  it('runs one reload at a time, and none once closed', async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let loads = 0;
    const reloader = new ConfigReloader({
      config: base,
      load: () => {
        loads += 1;
        const next = structuredClone(base);
        next.detectors.vpn.failure_threshold = 10 + loads;
        return next;
      },
      parts: [
        {
          name: 'slow',
          prepare: (config) => ({
            commit: async () => {
              order.push(`begin ${config.detectors.vpn.failure_threshold}`);
              if (config.detectors.vpn.failure_threshold === 11) await gate;
              order.push(`end ${config.detectors.vpn.failure_threshold}`);
            },
          }),
        },
      ],
      logger: silent,
    });
    const first = reloader.reload('signal');
    const second = reloader.reload('api');
    await eventually(
      async () => order.length,
      (n) => n >= 1,
    );
    expect(order).toEqual(['begin 11']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['begin 11', 'end 11', 'begin 12', 'end 12']);
    await reloader.close();
    expect(await reloader.reload('signal')).toMatchObject({ ok: false, reason: 'failed' });
    expect(loads).toBe(2);
  });
});

describe('a running daemon reloads', () => {
  let sim: Simulator;
  let admin: Redis;
  let a: WebhookReceiver;
  let b: WebhookReceiver;
  const secret = newSecret();
  const prefix = uniquePrefix();
  let daemon: Daemon | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 3, robots: 0, seed: 11, behaviours: false });
    for (const vehicle of sim.control.state().vehicles) {
      sim.control.updateVehicle(vehicle.id, { vpnConnected: true, pendingCommand: null });
    }
    admin = connect();
    [a, b] = await Promise.all([WebhookReceiver.start({ secret }), WebhookReceiver.start({ secret })]);
  });

  afterAll(async () => {
    await daemon?.stop();
    await Promise.all([a?.close(), b?.close(), sim?.close()]);
    await deletePrefixKeys(admin, prefix);
    await closeQuietly(admin);
  });

  const route = (receiver: string) => ({
    receiver,
    group_by: ['...'],
    group_wait: '0s',
    group_interval: '1s',
    repeat_interval: '1h',
  });
  const hook = (name: string, receiver: WebhookReceiver) => ({
    kind: 'webhook',
    name,
    url: receiver.url,
    secrets: [secret],
  });
  const configWith = (over: Record<string, unknown>): Config =>
    testConfig(sim.url, prefix, {
      pollers: { robots: { enabled: false }, robot_config: { enabled: false }, upstream: { interval: '1m' } },
      ...over,
    });
  const workersOn = async (receiver: string) => {
    const queue = new Queue(notifyQueueName(receiver), { connection: admin, prefix: bullPrefix(prefix) });
    try {
      return (await queue.getWorkers()).length;
    } finally {
      await queue.close();
    }
  };
  const vpnEvents = (receiver: WebhookReceiver, vehicle: string) =>
    receiver.deliveries
      .flatMap((delivery) => delivery.events)
      .filter((event) => event.subject === `vehicle/${vehicle}` && event.type === 'vehicle.vpn.disconnected');

  it('moves a route to a new receiver, drops a removed one, takes new thresholds, refuses a bad file', async () => {
    let file: Config | ConfigError = configWith({
      receivers: [hook('a', a)],
      notifications: { route: route('a') },
    });
    daemon = startDaemon(file, {
      logger: silent,
      configSource: () => {
        if (file instanceof ConfigError) throw file;
        return file;
      },
    });
    await eventually(
      () => admin.exists(`{${prefix}}:snap:vehicle:veh-0003:power`),
      (n) => n === 1,
    );
    sim.control.updateVehicle('veh-0001', { vpnConnected: false });
    await eventually(
      async () => vpnEvents(a, 'veh-0001').length,
      (n) => n === 1,
    );

    // The route now sends to b, a new receiver.
    file = configWith({ receivers: [hook('a', a), hook('b', b)], notifications: { route: route('b') } });
    const moved = await daemon.reload('api');
    expect(moved).toEqual({
      ok: true,
      status: 'reloaded',
      changed: ['notifications.route.receiver', 'receivers.b'],
      receivers: { added: ['b'], removed: [], changed: [] },
      needsRestart: [],
    });
    expect(await workersOn('b')).toBe(1);
    // The added receiver's series start at 0, as a receiver configured at start does.
    expect(await daemon.metrics.text()).toMatch(
      /^fleetwatch_notifications_total{[^}]*receiver="b"[^}]*outcome="rejected"[^}]*} 0$/m,
    );
    sim.control.updateVehicle('veh-0002', { vpnConnected: false });
    await eventually(
      async () => vpnEvents(b, 'veh-0002').length,
      (n) => n === 1,
    );
    expect(vpnEvents(a, 'veh-0002')).toEqual([]);

    // a is removed (its worker stops), thresholds change, and a restart-only key is kept.
    file = configWith({
      receivers: [hook('b', b)],
      notifications: { route: route('b') },
      detectors: { vpn: { failure_threshold: 3, success_threshold: 1 } },
      worker: { concurrency: 2 },
    });
    const trimmed = await daemon.reload('signal');
    expect(trimmed).toMatchObject({
      ok: true,
      receivers: { added: [], removed: ['a'], changed: [] },
      needsRestart: ['worker.concurrency'],
    });
    expect(await workersOn('a')).toBe(0);
    expect(await workersOn('b')).toBe(1);
    expect(daemon.runner.detectors.vehicleLink.failureThreshold).toBe(3);
    expect(daemon.config.worker.concurrency).toBe(4);

    // A file that cannot be used changes nothing, and the metrics say so.
    file = new ConfigError('fleetwatch.yaml', ['receivers.0.url: expected an http(s) URL']);
    expect(await daemon.reload('signal')).toMatchObject({ ok: false, reason: 'invalid' });
    expect(daemon.config.receivers.map((receiver) => receiver.name)).toEqual(['b']);
    expect(daemon.runner.detectors.vehicleLink.failureThreshold).toBe(3);
    const text = await daemon.metrics.text();
    expect(text).toMatch(/^fleetwatch_config_last_reload_successful({[^}]*})? 0$/m);
    expect(text).toMatch(/^fleetwatch_config_last_reload_success_timestamp_seconds({[^}]*})? \d+(\.\d+)?$/m);
    expect(await workersOn('b')).toBe(1);
  });
});
