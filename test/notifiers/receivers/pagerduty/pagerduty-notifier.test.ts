import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../../src/events/types.js';
import { SecretRegistry } from '../../../../src/log/secrets.js';
import type { DeliveryOutcome, Notifier } from '../../../../src/notifiers/notifier.js';
import {
  PagerDutyNotifier,
  type PagerDutyNotifierOptions,
  type PagerDutyReceiverConfig,
  pagerDutyNotifierFactory,
} from '../../../../src/notifiers/receivers/pagerduty/index.js';
import { PagerDutyStandin, pagerDutyAnswers } from '../../../support/pagerduty-standin.js';
import { acknowledged, notification, vehicles, vpnBack, vpnLost } from '../slack/fixtures.js';
import { capturingLogger } from '../webhook/helpers.js';

let standins: PagerDutyStandin[];
/** What each notifier logged, unscrubbed. */
let logs: string[][];
let outcomes: DeliveryOutcome[];
let notifiers: Notifier[];
/** Every routing key the notifiers were given: none may show in a log line or a reason. */
let keys: string[];

beforeEach(() => {
  standins = [];
  logs = [];
  outcomes = [];
  notifiers = [];
  keys = [];
});

afterEach(async () => {
  await Promise.all(notifiers.map((notifier) => notifier.close?.()));
  await Promise.all(standins.map((standin) => standin.close()));
  const lines = logs.flat();
  expect(lines.length).toBeGreaterThan(0);
  for (const text of [...lines, ...outcomes.map((outcome) => JSON.stringify(outcome))]) {
    for (const key of keys) expect(text).not.toContain(key);
  }
});

async function standin(
  options: Parameters<typeof PagerDutyStandin.start>[0] = {},
): Promise<PagerDutyStandin> {
  const started = await PagerDutyStandin.start(options);
  standins.push(started);
  return started;
}

/**
 * A notifier on `url`. Its logger scrubs nothing, so a routing key in a log line would show: only
 * the notifier keeps it out.
 */
type Fields = Partial<Record<keyof PagerDutyReceiverConfig, unknown>>;

function pagerDuty(
  fields: Fields & { url: string; routing_key: string },
  options: PagerDutyNotifierOptions = {},
): Notifier {
  const captured = capturingLogger();
  logs.push(captured.lines);
  const config = pagerDutyNotifierFactory.configSchema.parse({
    kind: 'pagerduty',
    name: 'on-call',
    ...fields,
  });
  keys.push(config.routing_key);
  const notifier = new PagerDutyNotifier(
    config,
    { logger: captured.logger, secrets: new SecretRegistry() },
    options,
  );
  notifiers.push(notifier);
  return notifier;
}

/** A notifier on the stand-in with its routing key, unless `fields` give another. */
function on(target: PagerDutyStandin, fields: Fields = {}) {
  return pagerDuty({
    ...fields,
    url: target.url,
    routing_key: String(fields.routing_key ?? target.routingKey),
  });
}

async function deliver(notifier: Notifier, events: FleetEvent[], attempt = 1) {
  const outcome = await notifier.deliver(notification(events), { attempt });
  outcomes.push(outcome);
  return outcome;
}

describe('PagerDutyNotifier against the Events API v2 stand-in', () => {
  it('triggers, acknowledges and resolves one alert under one dedup key', async () => {
    const target = await standin();
    const notifier = on(target);

    expect(await deliver(notifier, [vpnLost('veh-0003')])).toEqual({ kind: 'delivered', status: 202 });
    expect(target.open()).toEqual([
      {
        dedupKey: 'test/vehicle/veh-0003#vpn',
        status: 'triggered',
        triggers: 1,
        summary: 'veh-0003 is off the VPN: connected → disconnected',
        severity: 'warning',
      },
    ]);
    expect(await deliver(notifier, [acknowledged('veh-0003', 1_000)])).toMatchObject({ kind: 'delivered' });
    expect(target.open()).toMatchObject([{ status: 'acknowledged' }]);
    expect(await deliver(notifier, [vpnBack('veh-0003', 2_000)])).toMatchObject({ kind: 'delivered' });
    expect(target.open()).toEqual([]);
    expect(target.alerts).toHaveLength(1);

    const sent = target.received.map((item) => item.body as Record<string, unknown>);
    expect(sent.map((body) => [body.event_action, body.dedup_key, body.routing_key])).toEqual([
      ['trigger', 'test/vehicle/veh-0003#vpn', target.routingKey],
      ['acknowledge', 'test/vehicle/veh-0003#vpn', target.routingKey],
      ['resolve', 'test/vehicle/veh-0003#vpn', target.routingKey],
    ]);
    expect(target.received.every((item) => item.status === 202 && item.errors.length === 0)).toBe(true);
  });

  it('is at least once: a notification delivered twice leaves one open alert', async () => {
    const target = await standin();
    const notifier = on(target);
    const events = [vpnLost('veh-0001'), vpnLost('veh-0002', 1_000)];
    await deliver(notifier, events);
    await deliver(notifier, events, 2);
    expect(target.received).toHaveLength(4);
    expect(target.open().map((alert) => [alert.dedupKey, alert.triggers])).toEqual([
      ['test/vehicle/veh-0001#vpn', 2],
      ['test/vehicle/veh-0002#vpn', 2],
    ]);
  });

  it('stops at a 5xx half-way and retries the whole notification; the repeat is deduplicated', async () => {
    const target = await standin();
    const notifier = on(target);
    const events = [vpnLost('veh-0001'), vpnLost('veh-0002', 1_000), vpnLost('veh-0003', 2_000)];
    target.enqueue(pagerDutyAnswers.process(), pagerDutyAnswers.serverError());

    expect(await deliver(notifier, events)).toEqual({
      kind: 'retry',
      status: 500,
      reason:
        'event 2 of 3 (trigger test/vehicle/veh-0002#vpn): PagerDuty answered 500 error: Internal Server Error',
    });
    expect(target.received).toHaveLength(2);
    expect(await deliver(notifier, events, 2)).toEqual({ kind: 'delivered', status: 202 });
    expect(target.open().map((alert) => [alert.dedupKey, alert.triggers])).toEqual([
      ['test/vehicle/veh-0001#vpn', 2],
      ['test/vehicle/veh-0002#vpn', 1],
      ['test/vehicle/veh-0003#vpn', 1],
    ]);
  });

  it('turns a 429 into a hold of 30 s, or of its Retry-After', async () => {
    const target = await standin();
    const notifier = on(target);
    target.enqueue(pagerDutyAnswers.throttled(), pagerDutyAnswers.throttled({ 'retry-after': '7' }));
    expect(await deliver(notifier, [vpnLost('veh-0001')])).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterMs: 30_000,
      reason:
        'event 1 of 1 (trigger test/vehicle/veh-0001#vpn): PagerDuty answered 429 throttle event: ' +
        'Requests for this service are arriving too quickly. Please retry later.; retry after 30s',
    });
    expect(await deliver(notifier, [vpnLost('veh-0001')])).toMatchObject({
      kind: 'throttled',
      retryAfterMs: 7_000,
    });
    expect(await deliver(notifier, [vpnLost('veh-0001')])).toMatchObject({ kind: 'delivered' });
    expect(target.open()).toHaveLength(1);
  });

  it('sends the other events when PagerDuty refuses one, then rejects the notification with its words', async () => {
    const target = await standin();
    const notifier = on(target);
    target.enqueue({
      status: 400,
      body: {
        status: 'invalid event',
        message: 'Event object is invalid',
        errors: ["'payload.class' is wrong"],
      },
    });
    expect(await deliver(notifier, [vpnLost('veh-0001'), vpnLost('veh-0002', 1_000)])).toEqual({
      kind: 'rejected',
      status: 202,
      reason:
        'PagerDuty refused 1 of 2 events (1 accepted); event 1 of 2 (trigger test/vehicle/veh-0001#vpn): ' +
        "PagerDuty answered 400 invalid event: Event object is invalid ('payload.class' is wrong)",
    });
    expect(target.open().map((alert) => alert.dedupKey)).toEqual(['test/vehicle/veh-0002#vpn']);
  });

  it('keeps a routing key PagerDuty does not know, or echoes, out of reasons and logs', async () => {
    const target = await standin();
    const stranger = 'b'.repeat(32);
    const notifier = on(target, { routing_key: stranger });
    const outcome = await deliver(notifier, [vpnLost('veh-0001')]);
    expect(outcome).toMatchObject({ kind: 'rejected', status: 400 });
    expect(outcome.kind !== 'delivered' && outcome.reason).toContain('Invalid routing key');

    const echoing = on(target);
    target.enqueue({
      status: 400,
      body: { status: 'invalid event', message: `no service for ${target.routingKey}` },
    });
    const echoed = await deliver(echoing, [vpnLost('veh-0001')]);
    expect(echoed.kind !== 'delivered' && echoed.reason).toContain('no service for [REDACTED]');
  });

  it('paces a burst under the limit of its routing key: no 429, never more than the limit in a window', async () => {
    const rate = { events: 4, windowMs: 400 };
    const target = await standin({ rate });
    const notifier = pagerDuty(
      { url: target.url, routing_key: target.routingKey, events_per_minute: rate.events },
      { paceWindowMs: rate.windowMs },
    );
    expect(await deliver(notifier, vehicles(10))).toEqual({ kind: 'delivered', status: 202 });
    expect(target.received.map((item) => item.status)).toEqual(Array(10).fill(202));
    expect(target.busiest(rate.windowMs)).toBeLessThanOrEqual(rate.events);
    expect(target.open()).toHaveLength(10);
  });

  it('without pacing the same burst is throttled by the stand-in (what the pacing prevents)', async () => {
    const rate = { events: 4, windowMs: 60_000 };
    const target = await standin({ rate });
    const notifier = on(target);
    expect(await deliver(notifier, vehicles(10))).toMatchObject({ kind: 'throttled', status: 429 });
    expect(target.received.map((item) => item.status)).toEqual([202, 202, 202, 202, 429]);
  });

  it('retries when PagerDuty cannot be reached, naming no secret', async () => {
    const closed = await freePort();
    const notifier = pagerDuty({ url: `http://127.0.0.1:${closed}/v2/enqueue`, routing_key: 'c'.repeat(32) });
    const outcome = await deliver(notifier, [vpnLost('veh-0001')]);
    expect(outcome).toMatchObject({ kind: 'retry' });
    expect(outcome.kind !== 'delivered' && outcome.reason).toMatch(
      /^event 1 of 1 \(trigger test\/vehicle\/veh-0001#vpn\): could not reach PagerDuty: .*ECONNREFUSED/,
    );
  });

  it('is delivered without a request when nothing is left to send', async () => {
    const target = await standin();
    const notifier = on(target, { changes: 'skip' });
    const power = vehicles(1)[0] as FleetEvent;
    expect(await deliver(notifier, [{ ...power, type: 'vehicle.power.changed', id: 'evt-power' }])).toEqual({
      kind: 'delivered',
    });
    expect(target.received).toEqual([]);
  });
});

/** A port nothing listens on: one the system handed out and that was closed again. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
