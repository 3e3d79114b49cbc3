import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/server.js';
import type { DeadLetter } from '../../src/notifiers/delivery/dead-letters.js';
import { schedulePolicy } from '../../src/notifiers/receivers/webhook/retry-schedule.js';
import { createUpstream, type Upstream } from '../../src/upstream/index.js';
import { DeliveryHarness, type JobWatch, notification, vpnLost } from '../notifiers/delivery/helpers.js';
import { newSecret } from '../notifiers/receivers/webhook/helpers.js';
import { testConfig } from '../pollers/harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { bearer, TOKEN } from './helpers.js';

/** Silences and dead letters through the API, against the stores the CLI and the daemon use. */

const RECEIVER = 'ops-bridge';

let dh: DeliveryHarness;
let receiver: WebhookReceiver;
let watch: JobWatch;
let upstream: Upstream;
let app: FastifyInstance;
const secret = newSecret();

beforeAll(async () => {
  dh = await new DeliveryHarness().open();
  receiver = await WebhookReceiver.start({ secret });
  const config = testConfig('http://127.0.0.1:9', dh.prefix, {
    receivers: [{ kind: 'webhook', name: RECEIVER, url: receiver.url, secrets: [secret] }],
    http: { api_token: TOKEN, port: 0 },
  });
  upstream = createUpstream({ config: config.upstream });
  app = await buildHttpApp({
    config,
    logger: pino({ enabled: false }),
    redis: dh.producer,
    store: dh.store,
    upstream,
  });
  // Two notifications the receiver rejects: two dead letters.
  receiver.respondWith(422, 422);
  await dh.enqueue(
    notification('ntf-1', RECEIVER, [vpnLost('veh-0001')]),
    notification('ntf-2', RECEIVER, [vpnLost('veh-0002')]),
  );
  const started = await dh.start({
    name: RECEIVER,
    kind: 'webhook',
    notifier: dh.webhookNotifier(RECEIVER, receiver.url, secret),
    policy: schedulePolicy([0]),
  });
  watch = started.watch;
  await watch.nth('ntf-1');
  await watch.nth('ntf-2');
});

afterAll(async () => {
  await app?.close();
  await upstream?.close();
  await dh?.close();
  await receiver?.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({
    method,
    url,
    headers: bearer(),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

describe('silences', () => {
  it('round trip: create (201), list, expire (200), listed again only with all=true', async () => {
    const created = await call('POST', '/api/silences', {
      matchers: { type: 'vehicle.vpn.*', subject: 'vehicle/veh-0003' },
      duration: '2h',
      createdBy: 'ops@example.com',
      comment: 'VPN concentrator maintenance, CHG-1234',
    });
    expect(created.statusCode).toBe(201);
    const silence = created.json();
    expect(silence).toMatchObject({
      id: expect.stringMatching(/^sil_[0-9a-f]{12}$/),
      matchers: { type: 'vehicle.vpn.*', subject: 'vehicle/veh-0003' },
      createdBy: 'ops@example.com',
      state: 'active',
    });
    expect(Date.parse(silence.endsAt) - Date.parse(silence.startsAt)).toBe(2 * 3_600_000);

    const listed = (await call('GET', '/api/silences')).json();
    expect(listed.items.map((item: { id: string }) => item.id)).toContain(silence.id);

    const expired = await call('DELETE', `/api/silences/${silence.id}`);
    expect(expired.statusCode).toBe(200);
    expect(expired.json()).toMatchObject({ id: silence.id, state: 'expired', alreadyExpired: false });
    const again = await call('DELETE', `/api/silences/${silence.id}`);
    expect(again.json()).toMatchObject({ alreadyExpired: true });

    expect((await call('GET', '/api/silences')).json().items).toEqual([]);
    const all = (await call('GET', '/api/silences?all=true')).json();
    expect(all.items).toEqual([expect.objectContaining({ id: silence.id, state: 'expired' })]);

    const unknown = await call('DELETE', '/api/silences/sil_000000000000');
    expect(unknown.statusCode).toBe(404);
  });

  it('refuses a silence that would never be active, naming the field', async () => {
    const past = await call('POST', '/api/silences', {
      matchers: { severity: 'warning' },
      endsAt: '2020-01-01T00:00:00Z',
      createdBy: 'ops',
      comment: 'too late',
    });
    expect(past.statusCode).toBe(400);
    expect(past.json().error.message).toBe('body.endsAt: is in the past; the silence would never be active');
  });
});

describe('dead letters', () => {
  it('lists, replays exactly once (409 the second time) and purges', async () => {
    const listed = await call('GET', '/api/dead-letters');
    expect(listed.statusCode).toBe(200);
    const letters = listed.json().items as DeadLetter[];
    expect(letters.map((letter) => [letter.id, letter.receiver, letter.reason])).toEqual([
      ['ntf-1', RECEIVER, 'HTTP 422'],
      ['ntf-2', RECEIVER, 'HTTP 422'],
    ]);
    expect((await call('GET', `/api/dead-letters?receiver=${RECEIVER}`)).json().items).toHaveLength(2);
    expect((await call('GET', '/api/dead-letters?receiver=nobody')).statusCode).toBe(404);

    const replayed = await call('POST', '/api/dead-letters/ntf-1/replay');
    expect(replayed.statusCode).toBe(200);
    expect(replayed.json().replayed).toMatchObject({ id: 'ntf-1', receiver: RECEIVER });
    expect(await watch.nth('ntf-1', 2)).toMatchObject({ state: 'completed' });

    const twice = await call('POST', '/api/dead-letters/ntf-1/replay');
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error).toEqual({
      code: 'not_dead',
      message: 'ntf-1 is not a dead letter any more (it is delivered)',
    });
    expect((await call('POST', '/api/dead-letters/ntf-nope/replay')).statusCode).toBe(404);

    const purged = await call('DELETE', '/api/dead-letters/ntf-2');
    expect(purged.statusCode).toBe(200);
    expect(purged.json().purged).toMatchObject({ id: 'ntf-2' });
    expect((await call('GET', '/api/dead-letters')).json().items).toEqual([]);
    expect((await call('DELETE', '/api/dead-letters/ntf-2')).statusCode).toBe(404);

    expect(receiver.deliveries.map((delivery) => [delivery.webhookId, delivery.answer])).toEqual([
      ['ntf-1', 422],
      ['ntf-2', 422],
      ['ntf-1', 200],
    ]);
  });
});
