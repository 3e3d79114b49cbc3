import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../../src/metrics/index.js';
import { listRef } from '../../src/pollers/list-ref.js';
import { paceRef } from '../../src/pollers/pace.js';
import { upstreamRef } from '../../src/pollers/upstream-windows.js';
import { DeliveryHarness } from '../notifiers/delivery/helpers.js';
import { samples, sampleValue } from './helpers.js';

/**
 * The gauges fleetwatch's own alert rules read (deploy/prometheus/rules/): a receiver's disabled
 * flag, an upstream's open `monitor.upstream.degraded` incident, the pollers' intervals, and the
 * `installation` label on every series. Real Redis: the flags and snapshots are the ones the
 * delivery workers and the `upstream` poller write.
 */

let h: DeliveryHarness;
let metrics: Metrics;

beforeAll(async () => {
  h = await new DeliveryHarness().open();
  metrics = createMetrics({
    perEntity: false,
    fleetCacheMs: 0,
    installation: 'north-yard',
    pollers: {
      vehicles: { intervalMs: 30_000 },
      robot_health: { intervalMs: 30_000 },
      upstream: { intervalMs: 15_000, delayMs: 3_750 },
    },
    receivers: ['ops', 'tickets'],
    defaultMetrics: false,
  });
  metrics.bind({
    store: h.store,
    queues: ['ops', 'tickets'].map((receiver) => ({
      name: `notify-${receiver}`,
      queue: h.queue(receiver),
      receiver,
    })),
    holds: h.holds,
    disabled: h.disabledReceivers,
  });
});

afterAll(async () => {
  metrics?.unbind();
  await h?.close();
});

const disabled = (receiver: string) =>
  sampleValue(metrics.registry, 'fleetwatch_receiver_disabled', { receiver });
const degraded = (upstream: string) =>
  sampleValue(metrics.registry, 'fleetwatch_upstream_degraded', { upstream });
const behind = (poller: string) => sampleValue(metrics.registry, 'fleetwatch_poller_behind', { poller });
const unreadable = (upstream: string) =>
  sampleValue(metrics.registry, 'fleetwatch_list_unreadable', { upstream });

describe('fleetwatch_receiver_disabled', () => {
  it('is 1 while a receiver is disabled and 0 once it is enabled again', async () => {
    expect([await disabled('ops'), await disabled('tickets')]).toEqual([0, 0]);
    await h.disabledReceivers.disable('tickets', { kind: 'webhook', reason: 'HTTP 410', status: 410 });
    expect([await disabled('ops'), await disabled('tickets')]).toEqual([0, 1]);
    await h.disabledReceivers.enable('tickets');
    expect(await disabled('tickets')).toBe(0);
  });
});

describe('fleetwatch_upstream_degraded', () => {
  it('is 1 while the upstream snapshot is alerting (its incident open), 0 otherwise', async () => {
    expect([await degraded('token'), await degraded('fleet'), await degraded('robots')]).toEqual([0, 0, 0]);
    const at = new Date().toISOString();
    const firing = { alerting: true, streak: 0, streakSince: null, incidentSince: Date.now() };
    const opened = await h.store.commit(
      upstreamRef('fleet'),
      0,
      {
        state: { v: 1, health: firing },
        observedAt: at,
      },
      [],
    );
    expect(opened.committed).toBe(true);
    expect([await degraded('token'), await degraded('fleet'), await degraded('robots')]).toEqual([0, 1, 0]);
    const healthy = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
    await h.store.commit(
      upstreamRef('fleet'),
      1,
      {
        state: { v: 1, health: healthy },
        observedAt: new Date(Date.parse(at) + 1_000).toISOString(),
      },
      [],
    );
    expect(await degraded('fleet')).toBe(0);
  });
});

describe('fleetwatch_poller_behind', () => {
  it('is 1 while the poller pace snapshot is alerting (its incident open), 0 otherwise; never for a local poller', async () => {
    expect([await behind('vehicles'), await behind('robot_health')]).toEqual([0, 0]);
    expect(await samples(metrics.registry, 'fleetwatch_poller_behind')).toHaveLength(2);
    const at = Date.now();
    const firing = { alerting: true, streak: 0, streakSince: null, incidentSince: at };
    const opened = await h.store.commit(
      paceRef('robot_health'),
      0,
      { state: { v: 1, pace: firing }, observedAt: new Date(at).toISOString() },
      [],
    );
    expect(opened.committed).toBe(true);
    expect([await behind('vehicles'), await behind('robot_health')]).toEqual([0, 1]);
    const onPace = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
    await h.store.commit(
      paceRef('robot_health'),
      1,
      { state: { v: 1, pace: onPace }, observedAt: new Date(at + 1_000).toISOString() },
      [],
    );
    expect(await behind('robot_health')).toBe(0);
  });
});

describe('fleetwatch_list_unreadable', () => {
  it('is 1 while the list snapshot is alerting (its incident open), 0 otherwise', async () => {
    expect([await unreadable('fleet'), await unreadable('robots')]).toEqual([0, 0]);
    const at = Date.now();
    const firing = { alerting: true, streak: 0, streakSince: null, incidentSince: at };
    const opened = await h.store.commit(
      listRef('robots'),
      0,
      { state: { v: 1, list: firing }, observedAt: new Date(at).toISOString() },
      [],
    );
    expect(opened.committed).toBe(true);
    expect([await unreadable('fleet'), await unreadable('robots')]).toEqual([0, 1]);
    const whole = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
    await h.store.commit(
      listRef('robots'),
      1,
      { state: { v: 1, list: whole }, observedAt: new Date(at + 1_000).toISOString() },
      [],
    );
    expect(await unreadable('robots')).toBe(0);
  });
});

describe('the installation label and the poll intervals', () => {
  it('puts installation on every series and exports each scheduled poller interval in seconds', async () => {
    expect(
      await sampleValue(metrics.registry, 'fleetwatch_poll_interval_seconds', { poller: 'vehicles' }),
    ).toBe(30);
    expect(
      await sampleValue(metrics.registry, 'fleetwatch_poll_interval_seconds', { poller: 'upstream' }),
    ).toBe(15);
    const text = await metrics.text();
    const series = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(series.length).toBeGreaterThan(20);
    expect(series.filter((line) => !line.includes('installation="north-yard"'))).toEqual([]);
    const build = await samples(metrics.registry, 'fleetwatch_build_info');
    expect(build).toHaveLength(1);
  });

  it('has no installation label when none is given', async () => {
    const bare = createMetrics({ perEntity: false, defaultMetrics: false });
    expect(await bare.text()).toContain('fleetwatch_build_info{version=');
    expect(await bare.text()).not.toContain('installation=');
  });
});
