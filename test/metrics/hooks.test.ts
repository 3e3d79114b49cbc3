import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../src/events/types.js';
import { createMetrics, type Metrics } from '../../src/metrics/index.js';
import { resultOf } from '../../src/metrics/poll-metrics.js';
import type { DeliveryReport } from '../../src/notifiers/delivery/delivery-worker.js';
import type { Notification, Notifier } from '../../src/notifiers/notifier.js';
import { countOf, outcome, samples, sampleValue } from './helpers.js';

/** Hooks → series, without Redis: each hook the daemon hands to a stage increments what it should. */

const SECOND = 1_000;

function metricsAt(clock: { now: number }, over: Partial<Parameters<typeof createMetrics>[0]> = {}): Metrics {
  return createMetrics({
    perEntity: true,
    defaultMetrics: false,
    now: () => clock.now,
    pollers: {
      vehicles: { intervalMs: 10 * SECOND },
      upstream: { intervalMs: 60 * SECOND, delayMs: 5 * SECOND },
    },
    receivers: ['ops'],
    ...over,
  });
}

function event(type: string, time: string): FleetEvent {
  return {
    specversion: '1.0',
    id: `evt_${type}_${time}`,
    source: 'fleetwatch/test',
    type,
    subject: 'vehicle/V-1',
    time,
    datacontenttype: 'application/json',
    data: { severity: 'warning' },
  } as unknown as FleetEvent;
}

function notificationOf(events: FleetEvent[], over: Partial<Notification> = {}): Notification {
  return {
    id: 'ntf-1',
    receiver: 'ops',
    groupKey: 'type=vehicle.vpn.disconnected',
    groupLabels: {},
    status: 'firing',
    severity: 'warning',
    events,
    createdAt: new Date().toISOString(),
    ...over,
  };
}

function report(over: Partial<DeliveryReport> = {}): DeliveryReport {
  return {
    receiver: 'ops',
    kind: 'webhook',
    notificationId: 'ntf-1',
    outcome: { kind: 'delivered', status: 200 },
    attempt: 1,
    latencyMs: 120,
    ...over,
  };
}

describe('upstream request observer', () => {
  it('counts requests by operation and status (timeout and network included) and times them', async () => {
    const { registry, hooks } = metricsAt({ now: 0 });
    hooks.upstream.request({ operation: 'list_vehicles', method: 'GET', status: 200, durationMs: 40 });
    hooks.upstream.request({ operation: 'list_vehicles', method: 'GET', status: 200, durationMs: 60 });
    hooks.upstream.request({ operation: 'list_vehicles', method: 'GET', status: 503, durationMs: 5 });
    hooks.upstream.request({
      operation: 'oauth_token',
      method: 'POST',
      status: 'timeout',
      durationMs: 10_000,
    });
    hooks.upstream.request({ operation: 'oauth_token', method: 'POST', status: 'network', durationMs: 1 });

    const name = 'fleetwatch_upstream_requests_total';
    expect(await sampleValue(registry, name, { operation: 'list_vehicles', status: '200' })).toBe(2);
    expect(await sampleValue(registry, name, { operation: 'list_vehicles', status: '503' })).toBe(1);
    expect(await sampleValue(registry, name, { operation: 'oauth_token', status: 'timeout' })).toBe(1);
    expect(await sampleValue(registry, name, { operation: 'oauth_token', status: 'network' })).toBe(1);

    const duration = 'fleetwatch_upstream_request_duration_seconds';
    expect(await countOf(registry, duration, { operation: 'list_vehicles' })).toBe(3);
    expect(await sampleValue(registry, duration, { operation: 'list_vehicles' }, '_sum')).toBeCloseTo(0.105);
    // In seconds: the 10 s time-out lands in the 10 s bucket, not the 30 s one only.
    expect(await sampleValue(registry, duration, { operation: 'oauth_token', le: 10 }, '_bucket')).toBe(2);
  });
});

describe('poll hooks', () => {
  it('classifies job results', () => {
    const base = { poller: 'power' as const, tick: 1 };
    expect(resultOf(outcome({ ...base }))).toBe('ok');
    expect(resultOf(outcome({ ...base, observed: 4, failed: 1 }))).toBe('partial');
    expect(resultOf(outcome({ ...base, observed: 4, failed: 4 }))).toBe('failed');
    expect(resultOf(outcome({ ...base, targets: 3, leaseHeld: 3, observed: 0 }))).toBe('lease_held');
    expect(resultOf(outcome({ ...base, targets: 3, leaseHeld: 1, observed: 2 }))).toBe('ok');
    expect(resultOf(outcome({ ...base, skipped: 'stale-tick', observed: 0 }))).toBe('skipped');
    expect(resultOf(outcome({ ...base, skipped: 'upstream-degraded', observed: 0 }))).toBe(
      'upstream_degraded',
    );
  });

  it('times jobs, measures how late they started against their tick, and counts overruns', async () => {
    const clock = { now: 0 };
    const { registry, hooks } = metricsAt(clock);
    const tick = 100; // starts at 1,000 s (interval 10 s)
    // Started 2 s into its tick, took 0.5 s.
    clock.now = 1_002_500;
    hooks.poll.jobFinished(outcome({ poller: 'vehicles', tick, observed: 3 }), 500);
    // Started 9 s in, took 3 s: finished after the next tick began.
    clock.now = 1_012_000;
    hooks.poll.jobFinished(outcome({ poller: 'vehicles', tick, observed: 2, failed: 2 }), 3_000);
    // `upstream` jobs are meant to start 5 s into their tick: that is no lag.
    clock.now = 60 * 1_000 * 7 + 5_100;
    hooks.poll.jobFinished(outcome({ poller: 'upstream', tick: 7 }), 100);

    expect(await countOf(registry, 'fleetwatch_poll_duration_seconds', { poller: 'vehicles' })).toBe(2);
    expect(
      await sampleValue(registry, 'fleetwatch_poll_duration_seconds', { poller: 'vehicles' }, '_sum'),
    ).toBe(3.5);
    expect(await sampleValue(registry, 'fleetwatch_poll_lag_seconds', { poller: 'vehicles' }, '_sum')).toBe(
      11,
    );
    expect(await sampleValue(registry, 'fleetwatch_poll_lag_seconds', { poller: 'upstream' }, '_sum')).toBe(
      0,
    );
    expect(await sampleValue(registry, 'fleetwatch_poll_cycle_overrun_total', { poller: 'vehicles' })).toBe(
      1,
    );
    expect(
      await sampleValue(registry, 'fleetwatch_poll_cycle_overrun_total', { poller: 'upstream' }),
    ).toBeUndefined();
    expect(
      await sampleValue(registry, 'fleetwatch_poll_jobs_total', { poller: 'vehicles', result: 'ok' }),
    ).toBe(1);
    expect(
      await sampleValue(registry, 'fleetwatch_poll_jobs_total', { poller: 'vehicles', result: 'failed' }),
    ).toBe(1);
    expect(await sampleValue(registry, 'fleetwatch_poll_observations_total', { poller: 'vehicles' })).toBe(5);
  });

  it('counts the shards a tick added no job for, by poller', async () => {
    const { registry, hooks } = metricsAt({ now: 0 });
    hooks.poll.shardsCoalesced('robot_health', 27);
    hooks.poll.shardsCoalesced('robot_health', 3);
    expect(
      await sampleValue(registry, 'fleetwatch_poll_shards_coalesced_total', { poller: 'robot_health' }),
    ).toBe(30);
  });

  it('counts observation errors by poller and code, and jobs that threw', async () => {
    const { registry, hooks } = metricsAt({ now: 0 });
    const ref = { kind: 'vehicle' as const, id: 'V-1', facet: 'power' };
    hooks.poll.observationError({ poller: 'power', ref, error: { code: 'timeout', message: 'slow' } });
    hooks.poll.observationError({ poller: 'power', ref, error: { code: 'timeout', message: 'slow' } });
    hooks.poll.observationError({
      poller: 'power',
      ref,
      error: { code: 'http_503', status: 503, message: 'x' },
    });
    hooks.poll.jobFailed('power');
    hooks.poll.jobFailed('no-such-poller');
    hooks.poll.jobFailed(undefined);

    const errors = 'fleetwatch_observation_errors_total';
    expect(await sampleValue(registry, errors, { poller: 'power', code: 'timeout' })).toBe(2);
    expect(await sampleValue(registry, errors, { poller: 'power', code: 'http_503' })).toBe(1);
    const jobs = 'fleetwatch_poll_jobs_total';
    expect(await sampleValue(registry, jobs, { poller: 'power', result: 'error' })).toBe(1);
    expect(await sampleValue(registry, jobs, { poller: 'unknown', result: 'error' })).toBe(2);
  });

  it('starts every result of every configured poller at 0', async () => {
    const { registry } = metricsAt({ now: 0 });
    const series = await samples(registry, 'fleetwatch_poll_jobs_total');
    expect(series).toHaveLength(2 * 7);
    expect(series.every((sample) => sample.value === 0)).toBe(true);
  });
});

describe('events', () => {
  it('counts committed events by type, every catalogued type starting at 0', async () => {
    const { registry, hooks } = metricsAt({ now: 0 });
    expect(await sampleValue(registry, 'fleetwatch_events_total', { type: 'vehicle.vpn.disconnected' })).toBe(
      0,
    );
    hooks.events([
      event('vehicle.vpn.disconnected', '2026-01-01T00:00:00Z'),
      event('vehicle.vpn.disconnected', '2026-01-01T00:00:01Z'),
      event('robot.health.down', '2026-01-01T00:00:01Z'),
    ]);
    expect(await sampleValue(registry, 'fleetwatch_events_total', { type: 'vehicle.vpn.disconnected' })).toBe(
      2,
    );
    expect(await sampleValue(registry, 'fleetwatch_events_total', { type: 'robot.health.down' })).toBe(1);
  });
});

describe('notification hooks', () => {
  it('counts suppressed events by reason and notifications handed to delivery', async () => {
    const { registry, hooks } = metricsAt({ now: 0 });
    const vpn = event('vehicle.vpn.disconnected', '2026-01-01T00:00:00Z');
    hooks.notifications.onSuppressed({ event: vpn, reason: 'silenced', by: 'sil_1' });
    hooks.notifications.onSuppressed({ event: vpn, reason: 'maintenance', by: 'night' });
    hooks.notifications.onSuppressed({ event: vpn, reason: 'maintenance', by: 'night' });
    hooks.notifications.onHandedOff(notificationOf([vpn]));

    const suppressed = 'fleetwatch_notifications_suppressed_total';
    expect(await sampleValue(registry, suppressed, { reason: 'inhibited' })).toBe(0);
    hooks.notifications.onSuppressed({
      event: vpn,
      reason: 'inhibited',
      by: 'upstream-token',
      source: { type: 'monitor.upstream.degraded', subject: 'upstream/token' },
    });
    expect(await sampleValue(registry, suppressed, { reason: 'silenced' })).toBe(1);
    expect(await sampleValue(registry, suppressed, { reason: 'maintenance' })).toBe(2);
    expect(await sampleValue(registry, suppressed, { reason: 'inhibited' })).toBe(1);
    expect(await sampleValue(registry, 'fleetwatch_notifications_queued_total', { receiver: 'ops' })).toBe(1);
  });

  it('counts delivery attempts by receiver and outcome and times each send', async () => {
    const { registry, hooks } = metricsAt({ now: 0 });
    hooks.delivery(report({ outcome: { kind: 'retry', reason: 'HTTP 500', status: 500 }, latencyMs: 30 }));
    hooks.delivery(
      report({ outcome: { kind: 'throttled', reason: '429', retryAfterMs: 1_000 }, latencyMs: 10 }),
    );
    hooks.delivery(report({ attempt: 2, latencyMs: 60 }));

    const name = 'fleetwatch_notifications_total';
    expect(await sampleValue(registry, name, { receiver: 'ops', outcome: 'delivered' })).toBe(1);
    expect(await sampleValue(registry, name, { receiver: 'ops', outcome: 'retry' })).toBe(1);
    expect(await sampleValue(registry, name, { receiver: 'ops', outcome: 'throttled' })).toBe(1);
    // Configured receivers start at 0 for every outcome.
    expect(await sampleValue(registry, name, { receiver: 'ops', outcome: 'gone' })).toBe(0);
    expect(
      await countOf(registry, 'fleetwatch_notification_send_duration_seconds', { receiver: 'ops' }),
    ).toBe(3);
    expect(
      await sampleValue(
        registry,
        'fleetwatch_notification_send_duration_seconds',
        { receiver: 'ops' },
        '_sum',
      ),
    ).toBeCloseTo(0.1);
  });

  it('times delivered notifications from their oldest event, leaving out reminders and failures', async () => {
    const clock = { now: Date.parse('2026-01-01T00:01:00Z') };
    const metrics = metricsAt(clock);
    const answers: Array<Awaited<ReturnType<Notifier['deliver']>>> = [
      { kind: 'delivered', status: 200 },
      { kind: 'retry', reason: 'HTTP 502', status: 502 },
      { kind: 'delivered', status: 200 },
    ];
    let closed = 0;
    const notifier = metrics.instrumentNotifier({
      kind: 'webhook',
      name: 'ops',
      deliver: async () => answers.shift() ?? { kind: 'delivered' },
      close: async () => {
        closed += 1;
      },
    });
    expect([notifier.kind, notifier.name]).toEqual(['webhook', 'ops']);
    const events = [
      event('vehicle.vpn.disconnected', '2026-01-01T00:00:30Z'),
      event('x', '2026-01-01T00:00:50Z'),
    ];
    expect(await notifier.deliver(notificationOf(events), { attempt: 1 })).toEqual({
      kind: 'delivered',
      status: 200,
    });
    await notifier.deliver(notificationOf(events), { attempt: 1 });
    await notifier.deliver(notificationOf(events, { reminder: { firstNotifiedAt: 'x', count: 1 } }), {
      attempt: 1,
    });
    await notifier.close?.();

    const name = 'fleetwatch_notification_delivery_seconds';
    expect(await countOf(metrics.registry, name, { receiver: 'ops' })).toBe(1);
    expect(await sampleValue(metrics.registry, name, { receiver: 'ops' }, '_sum')).toBe(30);
    expect(closed).toBe(1);
  });
});

describe('the poll thread', () => {
  it("shows the poll thread's heap and its collections as it reports them, and nothing without a poll thread", async () => {
    const threaded = metricsAt({ now: 0 }, { pollThread: true });
    threaded.hooks.pollThreadHeap(41_000_000, 64_000_000);
    expect(await sampleValue(threaded.registry, 'fleetwatch_poll_thread_heap_size_used_bytes', {})).toBe(
      41_000_000,
    );
    expect(await sampleValue(threaded.registry, 'fleetwatch_poll_thread_heap_size_total_bytes', {})).toBe(
      64_000_000,
    );
    expect(threaded.names).toContain('fleetwatch_poll_thread_heap_size_used_bytes');
    threaded.hooks.pollThreadGc('minor', 0.002);
    threaded.hooks.pollThreadGc('minor', 0.004);
    threaded.hooks.pollThreadGc('major', 0.03);
    const gc = 'fleetwatch_poll_thread_gc_duration_seconds';
    expect(await countOf(threaded.registry, gc, { kind: 'minor' })).toBe(2);
    expect(await sampleValue(threaded.registry, gc, { kind: 'minor' }, '_sum')).toBeCloseTo(0.006);
    expect(await sampleValue(threaded.registry, gc, { kind: 'major', le: 0.1 }, '_bucket')).toBe(1);
    expect(await sampleValue(threaded.registry, gc, { kind: 'major', le: 0.01 }, '_bucket')).toBe(0);

    const inProcess = metricsAt({ now: 0 });
    inProcess.hooks.pollThreadHeap(41_000_000, 64_000_000);
    inProcess.hooks.pollThreadGc('minor', 0.002);
    expect(inProcess.names).not.toContain('fleetwatch_poll_thread_heap_size_used_bytes');
    expect(await inProcess.text()).not.toContain('fleetwatch_poll_thread_heap');
    expect(await inProcess.text()).not.toContain('fleetwatch_poll_thread_gc');
  });
});
