import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/cli/exit-codes.js';
import { loadConfigFile } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { buildHttpApp } from '../../../src/http/server.js';
import { createMetrics, type Metrics } from '../../../src/metrics/index.js';
import { type DeliveryService, startDelivery } from '../../../src/notifiers/delivery/delivery-service.js';
import { ReceiverHolds } from '../../../src/notifiers/delivery/holds.js';
import type { ReceiverState } from '../../../src/notifiers/delivery/receiver-states.js';
import { deliveryKeys } from '../../../src/store/keys.js';
import { createUpstream, type Upstream } from '../../../src/upstream/index.js';
import { bearer, captureLogs, TOKEN } from '../../http/helpers.js';
import { sampleValue } from '../../metrics/helpers.js';
import { runCli, writeSimulatorConfig } from '../../support/cli.js';
import { redisUrl } from '../../support/redis.js';
import { type ScriptedResponse, WebhookReceiver } from '../../support/webhook-receiver.js';
import { newSecret } from '../receivers/webhook/helpers.js';
import { DeliveryHarness, notification, vpnLost } from './helpers.js';

/**
 * A receiver that answers one 503 with `Retry-After: 99999999` (more than three years): the hold
 * is cut to its `max_hold`, shown by `receiver list`, `/api/receivers` and the metrics, and
 * `receiver resume` ends it at once, after which the queue drains in order (Guarantee 6). Two
 * delivery services stand for two replicas; everything is real: Redis, BullMQ, loopback HTTP.
 */

const RECEIVER = 'ops-bridge';
const MAX_HOLD_MS = 120_000;
const HELD_METRIC = 'fleetwatch_receiver_held_until_timestamp_seconds';
const INFO_METRIC = 'fleetwatch_receiver_hold_info';

let h: DeliveryHarness;
let receiver: WebhookReceiver;
let config: Config;
let configFile: string;
let upstream: Upstream;
let app: FastifyInstance;
let metrics: Metrics;
const replicas: DeliveryService[] = [];
const logs = captureLogs();
const secret = newSecret();
const env = () => ({
  FLEETWATCH_CONFIG: configFile,
  FLEET_SECRET: 'unused-secret',
  HOOK_SECRET: secret,
  API_TOKEN: TOKEN,
});

beforeAll(async () => {
  h = await new DeliveryHarness().open();
  receiver = await WebhookReceiver.start({ secret });
  configFile = writeSimulatorConfig(
    'http://127.0.0.1:9',
    `redis:
  url: ${redisUrl()}
  prefix: ${h.prefix}
http:
  port: 0
  api_token: \${API_TOKEN}
receivers:
  - kind: webhook
    name: ${RECEIVER}
    url: ${receiver.url}
    secrets:
      - \${HOOK_SECRET}
    timeout: 2s
    max_hold: 2m
`,
  );
  config = loadConfigFile(configFile, env());
  upstream = createUpstream({ config: config.upstream });
  app = await buildHttpApp({ config, logger: logs.logger, redis: h.producer, store: h.store, upstream });
  // Bound as the daemon binds its scrape-time gauges.
  metrics = createMetrics({
    perEntity: false,
    fleetCacheMs: 0,
    receivers: [RECEIVER],
    defaultMetrics: false,
  });
  metrics.bind({
    queues: [{ name: `notify-${RECEIVER}`, queue: h.queue(RECEIVER), receiver: RECEIVER }],
    holds: new ReceiverHolds({ redis: h.producer, prefix: h.prefix }),
  });
});

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop(1_000)));
  metrics?.unbind();
  await app?.close();
  await upstream?.close();
  await h?.close();
  await receiver?.close();
});

async function listed(): Promise<ReceiverState[]> {
  const run = await runCli(['receiver', 'list', '--json'], env());
  expect(run.code).toBe(ExitCode.ok);
  return JSON.parse(run.stdout) as ReceiverState[];
}

describe('a receiver asking for a very long wait', () => {
  it('is held for max_hold, visibly; resume releases it and the queue drains in order', async () => {
    receiver.respondWith({ status: 503, headers: { 'retry-after': '99999999' } });
    await h.enqueue(
      notification('ntf-1', RECEIVER, [vpnLost('veh-0001')]),
      notification('ntf-2', RECEIVER, [vpnLost('veh-0002')]),
      notification('ntf-3', RECEIVER, [vpnLost('veh-0003')]),
    );
    for (let replica = 0; replica < 2; replica += 1) {
      replicas.push(startDelivery({ config, logger: logs.logger, store: h.store, secrets: h.secrets }));
    }
    await Promise.all(replicas.map((replica) => replica.ready));
    await receiver.waitFor(1);

    // The hold as stored: cut to max_hold, with what the receiver asked for.
    const hold = await h.held(RECEIVER);
    expect(hold).toMatchObject({
      receiver: RECEIVER,
      cause: 'throttled',
      status: 503,
      reason: 'HTTP 503: retry after 99999999s',
      retryAfterMs: 99_999_999_000,
      capped: true,
      notification: 'ntf-1',
    });
    expect(Date.parse(hold.until) - Date.parse(hold.since)).toBe(MAX_HOLD_MS);
    // What BullMQ itself obeys: the queue's rate limit, no longer than max_hold.
    const limit = await h.queue(RECEIVER).getRateLimitTtl(1_000_000);
    expect(limit).toBeGreaterThan(0);
    expect(limit).toBeLessThanOrEqual(MAX_HOLD_MS);
    const capped = logs.lines.map((line) => JSON.parse(line) as { msg: string; level: number });
    expect(capped).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(
          /^receiver asked to wait 99999999s \(Retry-After\); capped at max_hold 2m: holding it until \S+; `fleetwatch receiver resume ops-bridge` releases it now$/,
        ),
      }),
    );

    // receiver list, as JSON and as a table.
    expect(await listed()).toEqual([
      { name: RECEIVER, kind: 'webhook', disabled: null, hold, maxHoldMs: MAX_HOLD_MS, deadLetters: 0 },
    ]);
    const table = await runCli(['receiver', 'list'], env());
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+KIND\s+MAX HOLD\s+DEAD LETTERS\s+STATE$/);
    expect(table.stdout.split('\n')[1]).toMatch(
      new RegExp(
        `^ops-bridge\\s+webhook\\s+2m\\s+0\\s+held until ${hold.until} \\(in \\d+m \\d+s\\): ` +
          'the receiver asked to wait: HTTP 503: retry after 99999999s; it asked for 1157d 9h, capped at max_hold$',
      ),
    );

    // The API.
    const api = await app.inject({ method: 'GET', url: '/api/receivers', headers: bearer() });
    expect(api.statusCode).toBe(200);
    expect(api.json()).toEqual({
      items: [
        { name: RECEIVER, kind: 'webhook', disabled: null, hold, maxHoldMs: MAX_HOLD_MS, deadLetters: 0 },
      ],
    });

    // The metrics.
    expect(await sampleValue(metrics.registry, HELD_METRIC, { receiver: RECEIVER })).toBe(
      Date.parse(hold.until) / 1000,
    );
    expect(
      await sampleValue(metrics.registry, INFO_METRIC, {
        receiver: RECEIVER,
        cause: 'throttled',
        status: '503',
        capped: 'true',
      }),
    ).toBe(1);

    // Nothing overtook the held notification.
    expect(receiver.deliveries.map((delivery) => delivery.webhookId)).toEqual(['ntf-1']);

    const resumed = await runCli(['receiver', 'resume', RECEIVER], env());
    expect(resumed.code).toBe(ExitCode.ok);
    expect(resumed.stdout).toBe(
      `${RECEIVER} resumed: it was held until ${hold.until} (the receiver asked to wait: ` +
        'HTTP 503: retry after 99999999s; it asked for 1157d 9h, capped at max_hold); its next notification is sent now\n',
    );
    await receiver.waitFor(4, 10_000);
    expect(receiver.deliveries.map((delivery) => [delivery.webhookId, answered(delivery.answer)])).toEqual([
      ['ntf-1', 503],
      ['ntf-1', 200],
      ['ntf-2', 200],
      ['ntf-3', 200],
    ]);

    expect(await h.holds.status(RECEIVER)).toBeUndefined();
    expect((await listed())[0]?.hold).toBeNull();
    expect(await sampleValue(metrics.registry, HELD_METRIC, { receiver: RECEIVER })).toBe(0);
    expect(await sampleValue(metrics.registry, INFO_METRIC, { receiver: RECEIVER })).toBeUndefined();
  });

  it('resume: a receiver not held says so; unknown names exit 4, a missing name exits 2', async () => {
    const again = await runCli(['receiver', 'resume', RECEIVER], env());
    expect(again.code).toBe(ExitCode.ok);
    expect(again.stdout).toBe(`${RECEIVER} is not held\n`);
    const unknown = await runCli(['receiver', 'resume', 'nobody'], env());
    expect(unknown.code).toBe(ExitCode.notFound);
    expect(unknown.stderr).toBe(
      `fleetwatch: no receiver named "nobody" in the config (configured: ${RECEIVER})\n`,
    );
    const missing = await runCli(['receiver', 'resume'], env());
    expect(missing.code).toBe(ExitCode.usage);
    expect(missing.stderr).toContain("missing required argument 'name'");
    const help = await runCli(['receiver', 'resume', '--help'], env());
    expect(help.code).toBe(ExitCode.ok);
    expect(help.stdout).toContain('end the hold of a receiver now, on every replica');
  });
});

describe('ReceiverHolds', () => {
  it("writes BullMQ's own rate-limit key of the receiver's queue, and refuses an empty hold", async () => {
    expect(deliveryKeys(h.prefix).receiverLimiter(RECEIVER)).toBe(h.queue(RECEIVER).keys.limiter);
    await expect(h.holds.hold(RECEIVER, { ms: 0, cause: 'retry', reason: 'x' })).rejects.toThrow(RangeError);
    expect(await h.holds.status(RECEIVER)).toBeUndefined();
  });
});

function answered(answer: ScriptedResponse): number | string {
  return typeof answer === 'object' ? answer.status : answer;
}
