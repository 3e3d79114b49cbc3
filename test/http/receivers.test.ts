import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { buildHttpApp } from '../../src/http/server.js';
import { schedulePolicy } from '../../src/notifiers/receivers/webhook/retry-schedule.js';
import { createUpstream, type Upstream } from '../../src/upstream/index.js';
import { DeliveryHarness, notification, vpnLost } from '../notifiers/delivery/helpers.js';
import { newSecret } from '../notifiers/receivers/webhook/helpers.js';
import { testConfig } from '../pollers/harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { bearer, captureLogs, TOKEN } from './helpers.js';

/**
 * `GET /api/receivers` and `POST /api/receivers/{name}/resume` against a real hold: a webhook
 * receiver on loopback answers 429 with `Retry-After: 3600`, within its `max_hold` of 2h, so the
 * hold is the full hour and not capped; resuming through the API (write token, audited) sends
 * the waiting notifications at once, in order.
 */

const RECEIVER = 'ops-bridge';

let dh: DeliveryHarness;
let receiver: WebhookReceiver;
let upstream: Upstream;
let app: FastifyInstance;
let open: FastifyInstance;
let config: Config;
const logs = captureLogs();
const secret = newSecret();

beforeAll(async () => {
  dh = await new DeliveryHarness().open();
  receiver = await WebhookReceiver.start({ secret });
  config = testConfig('http://127.0.0.1:9', dh.prefix, {
    receivers: [{ kind: 'webhook', name: RECEIVER, url: receiver.url, secrets: [secret], max_hold: '2h' }],
    http: { api_token: TOKEN, port: 0 },
  });
  upstream = createUpstream({ config: config.upstream });
  const options = { logger: logs.logger, redis: dh.producer, store: dh.store, upstream };
  app = await buildHttpApp({ config, ...options });
  // The same API without a token: reads open, changes refused.
  open = await buildHttpApp({
    config: { ...config, http: { ...config.http, api_token: undefined } },
    ...options,
  });
});

afterAll(async () => {
  await app?.close();
  await open?.close();
  await upstream?.close();
  await dh?.close();
  await receiver?.close();
});

describe('/api/receivers', () => {
  it('shows a hold; resume (write token, audited) releases it and the queue drains in order', async () => {
    receiver.respondWith({ status: 429, headers: { 'retry-after': '3600' } });
    await dh.enqueue(
      notification('ntf-a', RECEIVER, [vpnLost('veh-0001')]),
      notification('ntf-b', RECEIVER, [vpnLost('veh-0002')]),
    );
    await dh.start({
      name: RECEIVER,
      kind: 'webhook',
      notifier: dh.webhookNotifier(RECEIVER, receiver.url, secret),
      policy: schedulePolicy([0, 0, 0]),
      maxHoldMs: config.receivers[0]?.max_hold ?? 0,
    });
    await receiver.waitFor(1);
    const hold = await dh.held(RECEIVER);
    expect(Date.parse(hold.until) - Date.parse(hold.since)).toBe(3_600_000);

    const listed = await open.inject({ method: 'GET', url: '/api/receivers' });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      items: [
        {
          name: RECEIVER,
          kind: 'webhook',
          disabled: null,
          hold: {
            receiver: RECEIVER,
            since: hold.since,
            until: hold.until,
            cause: 'throttled',
            status: 429,
            reason: 'HTTP 429: retry after 1h',
            retryAfterMs: 3_600_000,
            capped: false,
            notification: 'ntf-a',
          },
          maxHoldMs: 7_200_000,
          deadLetters: 0,
        },
      ],
    });

    const url = `/api/receivers/${RECEIVER}/resume`;
    expect((await open.inject({ method: 'POST', url })).statusCode).toBe(403);
    expect((await app.inject({ method: 'POST', url })).statusCode).toBe(401);
    expect(
      (await app.inject({ method: 'POST', url, headers: bearer('not-the-token-0123456') })).statusCode,
    ).toBe(401);
    const unknown = await app.inject({
      method: 'POST',
      url: '/api/receivers/nobody/resume',
      headers: bearer(),
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toBe(
      'no receiver "nobody" in the config (GET /api/receivers lists them)',
    );
    const bad = await app.inject({
      method: 'POST',
      url: '/api/receivers/no%20such/resume',
      headers: bearer(),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toBe(
      'params.name: must be a receiver name (1 to 64 letters, digits, _ or -)',
    );
    // Refused requests changed nothing.
    expect(await dh.holds.status(RECEIVER)).toEqual(hold);

    const resumed = await app.inject({ method: 'POST', url, headers: bearer() });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toEqual({ receiver: RECEIVER, resumed: hold });
    const audit = logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'receiver resumed through the API');
    expect(audit).toEqual([
      expect.objectContaining({
        receiver: RECEIVER,
        wasHeldUntil: hold.until,
        cause: 'throttled',
        remote: '127.0.0.1',
      }),
    ]);

    await receiver.waitFor(3, 10_000);
    expect(receiver.deliveries.map((delivery) => delivery.webhookId)).toEqual(['ntf-a', 'ntf-a', 'ntf-b']);
    expect(receiver.accepted().map((delivery) => delivery.webhookId)).toEqual(['ntf-a', 'ntf-b']);

    const after = await app.inject({ method: 'GET', url: '/api/receivers', headers: bearer() });
    expect(after.json().items[0].hold).toBeNull();
    const again = await app.inject({ method: 'POST', url, headers: bearer() });
    expect(again.json()).toEqual({ receiver: RECEIVER, resumed: null });
  });
});
