import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretRegistry } from '../../../../src/log/secrets.js';
import type { DeliveryOutcome, Notification } from '../../../../src/notifiers/notifier.js';
import type { WebhookReceiverConfig } from '../../../../src/notifiers/receivers/webhook/config.js';
import {
  CLOUDEVENT_BATCH_CONTENT_TYPE,
  CLOUDEVENT_CONTENT_TYPE,
} from '../../../../src/notifiers/receivers/webhook/payload.js';
import {
  WebhookNotifier,
  type WebhookNotifierOptions,
} from '../../../../src/notifiers/receivers/webhook/webhook-notifier.js';
import { VERSION } from '../../../../src/version.js';
import { type ScriptedResponse, WebhookReceiver } from '../../../support/webhook-receiver.js';
import { capturingLogger, newSecret, notificationOf, vpnEvent, webhookConfig } from './helpers.js';

const SECRET = newSecret();
const open: Array<{ close(): Promise<void> }> = [];
let lines: string[];

afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

beforeEach(() => {
  lines = [];
});

async function receiver(secret: string | string[] = SECRET): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start({ secret });
  open.push(started);
  return started;
}

function notifier(
  fields: Partial<Record<keyof WebhookReceiverConfig, unknown>>,
  options: WebhookNotifierOptions = {},
): WebhookNotifier {
  const captured = capturingLogger();
  lines = captured.lines;
  const created = new WebhookNotifier(
    webhookConfig({ secrets: [SECRET], timeout: '2s', ...fields }),
    { logger: captured.logger, secrets: new SecretRegistry() },
    options,
  );
  open.push(created);
  return created;
}

const single = notificationOf([vpnEvent('veh-1')], 'ntf-single');
const batch = notificationOf([vpnEvent('veh-1'), vpnEvent('veh-2'), vpnEvent('veh-3')], 'ntf-batch');

/** One delivery of `notification` to a receiver that answers `answer`. */
async function outcomeFor(answer: ScriptedResponse, notification: Notification = single) {
  const target = await receiver();
  target.respondWith(answer);
  const outcome = await notifier({ url: target.url }).deliver(notification, { attempt: 1 });
  return { outcome, target };
}

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('WebhookNotifier: the request', () => {
  it('POSTs one event as structured-mode CloudEvents JSON, signed, with the notification id as webhook-id', async () => {
    const target = await receiver();
    const before = Math.floor(Date.now() / 1000);
    const outcome = await notifier({ url: target.url, headers: { 'X-Tenant': 'acme' } }).deliver(single, {
      attempt: 1,
    });
    expect(outcome).toEqual({ kind: 'delivered', status: 200 });
    const [delivery] = await target.waitFor(1);
    expect(delivery?.webhookId).toBe('ntf-single');
    expect(delivery?.timestamp).toBeGreaterThanOrEqual(before);
    expect(delivery?.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(delivery?.headers['content-type']).toBe(CLOUDEVENT_CONTENT_TYPE);
    expect(delivery?.headers['user-agent']).toBe(`fleetwatch/${VERSION}`);
    expect(delivery?.headers['x-tenant']).toBe('acme');
    expect(delivery?.body).toBe(JSON.stringify(vpnEvent('veh-1')));
    expect(delivery?.payload).toEqual(vpnEvent('veh-1'));
  });

  it('sends a group of events as one CloudEvents batch, and the receiver sees each event id once', async () => {
    const target = await receiver();
    target.respondWith(500, 'drop');
    const sender = notifier({ url: target.url });
    const outcomes: DeliveryOutcome[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) outcomes.push(await sender.deliver(batch, { attempt }));
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['retry', 'retry', 'delivered']);
    const deliveries = await target.waitFor(3);
    expect(deliveries.map((delivery) => delivery.webhookId)).toEqual(['ntf-batch', 'ntf-batch', 'ntf-batch']);
    expect(deliveries[0]?.headers['content-type']).toBe(CLOUDEVENT_BATCH_CONTENT_TYPE);
    expect(deliveries[0]?.payload).toEqual(batch.events);
    expect(target.uniqueEvents().map((event) => event.id)).toEqual(batch.events.map((event) => event.id));
  });

  it('sends a notification larger than max_body in parts, each signed, in order, none over the limit', async () => {
    // A web server that refuses bodies over 64 KiB (nginx's client_max_body_size, lowered).
    const limit = 65_536;
    const target = await WebhookReceiver.start({ secret: SECRET, maxBody: limit });
    open.push(target);
    const storm = notificationOf(
      Array.from({ length: 500 }, (_, index) => vpnEvent(`veh-${index}`)),
      'ntf-storm',
    );
    const whole = await notifier({ url: target.url, max_body: '64MiB' }).deliver(storm, { attempt: 1 });
    expect(whole).toMatchObject({ kind: 'rejected', status: 413 });

    const sender = notifier({ url: target.url, max_body: limit });
    expect(await sender.deliver(storm, { attempt: 1 })).toEqual({ kind: 'delivered', status: 200 });
    const parts = target.deliveries;
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(parts.map((part) => part.webhookId)).toEqual(
      parts.map((_, index) => `ntf-storm~part-${index + 1}-of-${parts.length}`),
    );
    expect(parts.every((part) => Buffer.byteLength(part.body) <= limit)).toBe(true);
    expect(parts.flatMap((part) => part.events)).toEqual(storm.events);
    expect(target.rejected).toHaveLength(1);
  });

  it('ends an attempt at the first part that fails, and sends every part again under the same ids', async () => {
    const target = await receiver();
    const storm = notificationOf(
      Array.from({ length: 500 }, (_, index) => vpnEvent(`veh-${index}`)),
      'ntf-storm',
    );
    const sender = notifier({ url: target.url, max_body: 65_536 });
    target.respondWith(200, 503);
    const first = await sender.deliver(storm, { attempt: 1 });
    expect(first).toMatchObject({ kind: 'retry', status: 503 });
    expect(first.kind === 'retry' && first.reason).toMatch(/^part 2 of \d+: /);
    expect(target.deliveries).toHaveLength(2);
    expect(await sender.deliver(storm, { attempt: 2 })).toEqual({ kind: 'delivered', status: 200 });
    const ids = target.deliveries.map((delivery) => delivery.webhookId);
    const count = ids.length - 2;
    expect(ids.slice(2)).toEqual(ids.slice(2).map((_, index) => `ntf-storm~part-${index + 1}-of-${count}`));
    expect(ids.slice(0, 2)).toEqual(ids.slice(2, 4));
    expect(target.uniqueEvents().map((event) => event.id)).toEqual(storm.events.map((event) => event.id));
  });

  it('keeps webhook-id across retries, with a fresh timestamp and signature each time', async () => {
    const target = await receiver();
    target.respondWith(503, 200);
    let now = Date.now() - 3_000;
    const sender = notifier({ url: target.url }, { now: () => now });
    expect((await sender.deliver(single, { attempt: 1 })).kind).toBe('retry');
    now += 3_000;
    expect(await sender.deliver(single, { attempt: 2 })).toEqual({ kind: 'delivered', status: 200 });
    const [first, second] = await target.waitFor(2);
    expect(second?.webhookId).toBe(first?.webhookId);
    expect((second?.timestamp ?? 0) - (first?.timestamp ?? 0)).toBe(3);
    expect(second?.signature).not.toBe(first?.signature);
    expect(second?.body).toBe(first?.body);
    expect(target.rejected).toEqual([]);
  });

  it('signs with every secret, so a receiver knowing only the new or only the old one verifies', async () => {
    const [oldSecret, freshSecret] = [newSecret(), newSecret(48)];
    const knowsOld = await receiver(oldSecret);
    const knowsNew = await receiver(freshSecret);
    const knowsNeither = await receiver(newSecret());
    for (const target of [knowsOld, knowsNew]) {
      const outcome = await notifier({ url: target.url, secrets: [freshSecret, oldSecret] }).deliver(single, {
        attempt: 1,
      });
      expect(outcome).toEqual({ kind: 'delivered', status: 200 });
      expect(target.deliveries).toHaveLength(1);
      expect(target.deliveries[0]?.signature.split(' ')).toHaveLength(2);
    }
    const refused = await notifier({ url: knowsNeither.url, secrets: [freshSecret, oldSecret] }).deliver(
      single,
      {
        attempt: 1,
      },
    );
    expect(refused).toEqual({
      kind: 'rejected',
      status: 401,
      reason: 'HTTP 401: signature verification failed',
    });
    expect(knowsNeither.rejected[0]?.reason).toBe('No matching signature found');
  });

  it('is refused by the receiver when the body is changed after signing', async () => {
    const target = await receiver();
    await notifier({ url: target.url }).deliver(single, { attempt: 1 });
    const [original] = await target.waitFor(1);
    const headers = {
      'content-type': String(original?.headers['content-type']),
      'webhook-id': String(original?.webhookId),
      'webhook-timestamp': String(original?.timestamp),
      'webhook-signature': String(original?.signature),
    };
    const tampered = String(original?.body).replace('"severity":"warning"', '"severity":"info"');
    expect(tampered).not.toBe(original?.body);
    const response = await fetch(target.url, { method: 'POST', headers, body: tampered });
    expect(response.status).toBe(401);
    await response.text();
    const [rejected] = await target.waitForRejected(1);
    expect(rejected?.reason).toBe('No matching signature found');
    expect(target.deliveries).toHaveLength(1);
    // The same headers with the untouched body still verify: only the change was refused.
    const replay = await fetch(target.url, { method: 'POST', headers, body: original?.body });
    expect(replay.status).toBe(200);
    await replay.text();
  });
});

describe('WebhookNotifier: outcomes', () => {
  it('2xx → delivered', async () => {
    expect((await outcomeFor(204)).outcome).toEqual({ kind: 'delivered', status: 204 });
    expect((await outcomeFor({ status: 202, body: 'queued' })).outcome).toEqual({
      kind: 'delivered',
      status: 202,
    });
  });

  it('301 → retry, and the redirect is not followed', async () => {
    const { outcome, target } = await outcomeFor({ status: 301, headers: { location: '/elsewhere' } });
    expect(outcome).toEqual({
      kind: 'retry',
      status: 301,
      reason: 'HTTP 301: redirects are not followed; check the receiver URL',
    });
    expect(target.deliveries).toHaveLength(1);
  });

  it('410 → gone', async () => {
    expect((await outcomeFor({ status: 410, body: 'endpoint removed' })).outcome).toEqual({
      kind: 'gone',
      status: 410,
      reason: 'HTTP 410: endpoint removed',
    });
  });

  it('429 with Retry-After → throttled for that long; without → retry', async () => {
    expect((await outcomeFor({ status: 429, headers: { 'retry-after': '7' } })).outcome).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterMs: 7_000,
      reason: 'HTTP 429: retry after 7s',
    });
    expect((await outcomeFor({ status: 429, body: 'slow down' })).outcome).toEqual({
      kind: 'retry',
      status: 429,
      reason: 'HTTP 429: slow down',
    });
  });

  it('502 → retry; 503 and 504 with Retry-After → throttled', async () => {
    expect((await outcomeFor(502)).outcome).toEqual({ kind: 'retry', status: 502, reason: 'HTTP 502' });
    const inTwoMinutes = new Date(Date.now() + 120_000).toUTCString();
    const { outcome } = await outcomeFor({ status: 503, headers: { 'retry-after': inTwoMinutes } });
    expect(outcome).toMatchObject({ kind: 'throttled', status: 503 });
    expect(outcome.kind === 'throttled' && outcome.retryAfterMs).toBeGreaterThan(110_000);
    expect((await outcomeFor({ status: 504, headers: { 'retry-after': '60' } })).outcome).toEqual({
      kind: 'throttled',
      status: 504,
      retryAfterMs: 60_000,
      reason: 'HTTP 504: retry after 1m',
    });
    expect((await outcomeFor(504)).outcome).toEqual({ kind: 'retry', status: 504, reason: 'HTTP 504' });
  });

  it('400 → rejected with the status and a short excerpt of the body', async () => {
    const { outcome } = await outcomeFor({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: `{"error":"unknown event type",\n"detail":"${'x'.repeat(5_000)}"}`,
    });
    expect(outcome.kind).toBe('rejected');
    expect(outcome.status).toBe(400);
    const reason = outcome.kind === 'rejected' ? outcome.reason : '';
    expect(reason.startsWith('HTTP 400: {"error":"unknown event type", "detail":"xxx')).toBe(true);
    expect(reason.length).toBeLessThanOrEqual('HTTP 400: '.length + 200);
  });

  it('500 → retry', async () => {
    expect((await outcomeFor({ status: 500, body: 'Internal Server Error' })).outcome).toEqual({
      kind: 'retry',
      status: 500,
      reason: 'HTTP 500: Internal Server Error',
    });
  });

  it('a refused connection → retry', async () => {
    const port = await unusedPort();
    const outcome = await notifier({ url: `http://127.0.0.1:${port}/hook` }).deliver(single, { attempt: 1 });
    expect(outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('ECONNREFUSED') });
    expect(outcome.status).toBeUndefined();
  });

  it('a dropped connection → retry', async () => {
    const { outcome } = await outcomeFor('drop');
    expect(outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^network error: /) });
  });

  it('no answer within the time-out → retry, and the same webhook-id lets the receiver drop the late duplicate', async () => {
    const target = await receiver();
    target.respondWith('hang', { status: 200, delayMs: 1_000 }, 200);
    const sender = notifier({ url: target.url, timeout: '300ms' });
    const started = Date.now();
    expect(await sender.deliver(single, { attempt: 1 })).toEqual({
      kind: 'retry',
      reason: 'no answer within 300ms',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await sender.deliver(single, { attempt: 2 })).toEqual({
      kind: 'retry',
      reason: 'no answer within 300ms',
    });
    expect(await sender.deliver(single, { attempt: 3 })).toEqual({ kind: 'delivered', status: 200 });
    expect(target.deliveries).toHaveLength(3);
    expect(target.uniqueEvents().map((event) => event.id)).toEqual([vpnEvent('veh-1').id]);
  });

  it('a cancelled delivery (shutting down) → retry, without waiting for the time-out', async () => {
    const target = await receiver();
    target.respondWith('hang');
    const controller = new AbortController();
    const pending = notifier({ url: target.url, timeout: '10s' }).deliver(single, {
      attempt: 1,
      signal: controller.signal,
    });
    await target.waitFor(1);
    controller.abort();
    expect(await pending).toEqual({ kind: 'retry', reason: 'cancelled before an answer came' });
    expect(
      await notifier({ url: target.url }).deliver(single, { attempt: 1, signal: controller.signal }),
    ).toEqual({
      kind: 'retry',
      reason: 'cancelled before sending',
    });
  });

  it('a notification without events, or with an id no header can carry → rejected', async () => {
    const target = await receiver();
    const sender = notifier({ url: target.url });
    expect(await sender.deliver(notificationOf([], 'ntf-empty'), { attempt: 1 })).toEqual({
      kind: 'rejected',
      reason: 'cannot build the request: the notification has no events',
    });
    const outcome = await sender.deliver(notificationOf([vpnEvent('veh-1')], 'ntf\r\nx-evil: 1'), {
      attempt: 1,
    });
    expect(outcome).toMatchObject({
      kind: 'rejected',
      reason: expect.stringMatching(/^cannot send the request: /),
    });
    expect(target.deliveries).toHaveLength(0);
  });
});

describe('WebhookNotifier: secrets', () => {
  it('puts no secret in any reason or log line', async () => {
    const urlToken = 'qtok-93f1c2aa77';
    const headerKey = 'hkey-5b0e7d12c4';
    const secrets = [SECRET, newSecret()];
    const target = await receiver(secrets[1]);
    const echo = (status: number) => ({
      status,
      body: `you sent ${secrets.join(',')} ${urlToken} ${headerKey} to ${target.url}?token=${urlToken}`,
    });
    target.respondWith(
      echo(400),
      echo(500),
      echo(410),
      { ...echo(429), headers: { 'retry-after': '1' } },
      'hang',
    );
    const sender = notifier({
      url: `${target.url}?token=${urlToken}`,
      secrets,
      headers: { 'x-api-key': headerKey },
      timeout: '300ms',
    });
    const outcomes: DeliveryOutcome[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) outcomes.push(await sender.deliver(single, { attempt }));
    const refused = await notifier({
      url: `http://user:${urlToken}@127.0.0.1:${await unusedPort()}/x?token=${urlToken}`,
      secrets,
      headers: { 'x-api-key': headerKey },
    }).deliver(single, { attempt: 1 });
    outcomes.push(refused);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual([
      'rejected',
      'retry',
      'gone',
      'throttled',
      'retry',
      'retry',
    ]);
    expect(outcomes[0]?.kind === 'rejected' && outcomes[0].reason).toContain('[REDACTED]');
    expect(lines.length).toBeGreaterThan(0);
    const text = [...outcomes.map((outcome) => JSON.stringify(outcome)), ...lines].join('\n');
    for (const secret of [...secrets, ...secrets.map((s) => s.slice(6)), urlToken, headerKey]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain(target.url);
    // What the receiver got carried the header and the token: the secrets are used, only never told.
    expect(target.deliveries[0]?.headers['x-api-key']).toBe(headerKey);
  });
});
