import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { EventLog } from '../../../src/store/event-log.js';
import { storeKeys } from '../../../src/store/keys.js';
import {
  type DaemonConfigOptions,
  type DaemonProcess,
  daemonConfig,
  printOnFailure,
  startDaemon,
} from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { readAllEvents, waitFor, waitForPollRound } from '../../support/scenario.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * `fleetwatch run` reloads on SIGHUP instead of dying (status 129): a file that cannot be used is
 * refused and the daemon runs on, and a route moved from one receiver to another under a steady
 * stream of events delivers every event of the log exactly once across the two.
 */

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('reloading a running daemon', () => {
  const prefixes: string[] = [];
  let sim: Simulator;
  let admin: Redis;
  let daemon: DaemonProcess | undefined;
  let dir: string;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 20, robots: 0, seed: 17, behaviours: false });
    admin = connect();
    dir = mkdtempSync(join(tmpdir(), 'fleetwatch-reload-'));
  });

  afterEach(async () => {
    await daemon?.kill();
    daemon = undefined;
    sim.control.setBehaviours(false);
  });

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await sim?.close();
    if (admin) {
      for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
      admin.disconnect();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  function options(prefix: string): DaemonConfigOptions {
    return {
      upstreamUrl: sim.url,
      redisUrl: redisUrl(),
      prefix,
      logLevel: 'info',
      // The vehicle list is the stream (VPN links and addresses); power is not polled.
      pollers: { robots: { enabled: false }, robot_config: { enabled: false }, power: { enabled: false } },
    };
  }

  function write(file: string, document: Record<string, unknown> | string): void {
    writeFileSync(file, typeof document === 'string' ? document : stringify(document));
  }

  /** Waits for the `n`-th log line matching `pattern`. */
  const logged = (fw: DaemonProcess, pattern: RegExp, n = 1) =>
    waitFor(
      `log line ${pattern} × ${n}`,
      async () => fw.linesMatching(pattern).length,
      (count) => (count >= n ? undefined : `${count} so far`),
      { timeoutMs: 20_000, intervalMs: 50 },
    );

  it('survives SIGHUP, refuses an invalid file and keeps running, then applies a valid one', async (context) => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const file = join(dir, 'sighup.yaml');
    const valid = daemonConfig(options(prefix));
    write(file, valid);
    const fw = startDaemon(file, 'sighup');
    daemon = fw;
    printOnFailure(context, () => fw.output());
    await fw.whenRunning;

    write(file, { ...valid, worker: { concurrency: 0 } });
    fw.child.kill('SIGHUP');
    await logged(fw, /config reload refused/);
    const [refusal] = fw.linesMatching(/config reload refused/);
    expect(refusal).toContain(
      `${file}: worker.concurrency: expected a whole number between 1 and 256; got 0`,
    );
    expect(fw.alive).toBe(true);

    const address = /HTTP server listening on (http:\/\/[^ "]+)/.exec(
      fw.linesMatching(/HTTP server listening/)[0] ?? '',
    )?.[1];
    expect(address).toBeDefined();
    const metric = async (name: string) => {
      const text = await (await fetch(`${address}/metrics`)).text();
      return new RegExp(`^${name}(?:{[^}]*})? (\\S+)$`, 'm').exec(text)?.[1];
    };
    expect(await metric('fleetwatch_config_last_reload_successful')).toBe('0');

    write(file, { ...valid, detectors: { ...(valid.detectors as object), vpn: { failure_threshold: 2 } } });
    fw.child.kill('SIGHUP');
    await logged(fw, /"msg":"configuration reloaded"/);
    expect(fw.linesMatching(/"msg":"configuration reloaded"/)[0]).toContain(
      'detectors.vpn.failure_threshold',
    );
    expect(await metric('fleetwatch_config_last_reload_successful')).toBe('1');
    expect(fw.alive).toBe(true);
    expect((await fw.stop()).code).toBe(0);
  });

  it('moves a route from receiver A to receiver B under load: every event delivered exactly once', {
    timeout: 120_000,
  }, async (context) => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const [a, b] = await Promise.all([
      WebhookReceiver.start({ secret: SECRET }),
      WebhookReceiver.start({ secret: SECRET }),
    ]);
    receivers.push(a!, b!);
    const route = (receiver: string) => ({
      route: {
        receiver,
        group_by: ['subject'],
        group_wait: '0s',
        group_interval: '1s',
        repeat_interval: '1h',
      },
      // Nothing muted: every event of the log is to be delivered.
      inhibit_rules: [],
    });
    const hook = (name: string, receiver: WebhookReceiver) => ({
      kind: 'webhook',
      name,
      url: receiver.url,
      secrets: [SECRET],
    });
    const file = join(dir, 'route.yaml');
    write(
      file,
      daemonConfig({ ...options(prefix), extra: { receivers: [hook('a', a!)], notifications: route('a') } }),
    );
    const fw = startDaemon(file, 'route');
    daemon = fw;
    const log = new EventLog({ redis: admin, prefix });
    const ids = (receiver: WebhookReceiver) =>
      receiver.deliveries.flatMap((delivery) => delivery.events.map((event) => event.id));
    printOnFailure(
      context,
      async () =>
        `${fw.output()}\n--- a: ${ids(a!).length}, b: ${ids(b!).length}, log: ${(await readAllEvents(log)).length}` +
        `\n--- not delivered: ${JSON.stringify(
          (await readAllEvents(log))
            .map((entry) => entry.event)
            .filter((event) => !ids(a!).includes(event.id) && !ids(b!).includes(event.id))
            .map(({ id, type, subject, time }) => ({ id, type, subject, time })),
        )}`,
    );
    await fw.whenRunning;
    await waitFor(
      'the first vehicle list committed',
      () => admin.exists(storeKeys(prefix).membership('vehicle')),
      (found) => (found === 1 ? undefined : 'not yet'),
    );
    await waitForPollRound(admin, prefix, { pollers: ['vehicles'] });

    // A steady stream: vehicles drop off the VPN and come back (often with a new address), about
    // ten a second; an incident that fired before the reload resolves after it.
    sim.control.setBehaviours({
      intervalMs: 100,
      vpnFlapRate: 0.05,
      vpnOutageMs: [300, 1_500],
      ipChangeRate: 0.5,
      ipLossRate: 0.3,
      powerChangeRate: 0,
      stuckCommandRate: 0,
      robotOutageRate: 0,
      leaseChangeRate: 0,
      feedbackChangeRate: 0,
      routeChangeRate: 0,
    });
    const delivered = (receiver: WebhookReceiver, n: number) =>
      waitFor(
        `${n} events delivered`,
        async () => ids(receiver).length,
        (count) => (count >= n ? undefined : `${count} so far`),
        { timeoutMs: 30_000 },
      );
    await delivered(a!, 20);

    // Mid-stream: the route moves to b, a receiver the file did not have.
    write(
      file,
      daemonConfig({
        ...options(prefix),
        extra: { receivers: [hook('a', a!), hook('b', b!)], notifications: route('b') },
      }),
    );
    fw.child.kill('SIGHUP');
    await logged(fw, /"msg":"configuration reloaded"/);
    await delivered(b!, 20);

    // The stream stops; one more round of the vehicle list commits what it saw last.
    sim.control.setBehaviours(false);
    await waitForPollRound(admin, prefix, { pollers: ['vehicles'] });
    const logIds = (await readAllEvents(log)).map((entry) => entry.event.id);
    await waitFor(
      'every event of the log delivered',
      async () => {
        const seen = new Set([...ids(a!), ...ids(b!)]);
        return logIds.filter((id) => !seen.has(id));
      },
      (missing) => (missing.length === 0 ? undefined : `${missing.length} not delivered yet`),
      { timeoutMs: 30_000 },
    );

    const all = [...ids(a!), ...ids(b!)];
    const counts = new Map<string, number>();
    for (const id of all) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts].filter(([, count]) => count > 1)).toEqual([]);
    const inLog = new Set((await readAllEvents(log)).map((entry) => entry.event.id));
    expect(all.filter((id) => !inLog.has(id))).toEqual([]);
    expect(ids(a!).filter((id) => ids(b!).includes(id))).toEqual([]);
    expect(fw.alive).toBe(true);
    expect(fw.linesMatching(/"level":(50|60)\b/)).toEqual([]);
  });
});
