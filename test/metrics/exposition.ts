import type { FleetEvent } from '../../src/events/types.js';
import { createMetrics, type Metrics } from '../../src/metrics/index.js';
import type { SnapshotRecord, SnapshotRef } from '../../src/store/snapshot-store.js';
import { outcome } from './helpers.js';

/** A registry with every family holding samples: hooks fed, fleet and queue gauges bound to fakes. */
export async function populatedMetrics(perEntity = true): Promise<Metrics> {
  const metrics = createMetrics({
    perEntity,
    fleetCacheMs: 0,
    installation: 'plant-7',
    pollers: { vehicles: { intervalMs: 30_000 }, power: { intervalMs: 30_000 } },
    receivers: ['ops'],
    pollThread: true,
  });
  const { hooks } = metrics;
  hooks.pollThreadHeap(41_000_000, 64_000_000);
  hooks.upstream.request({ operation: 'list_vehicles', method: 'GET', status: 200, durationMs: 12 });
  hooks.upstream.request({ operation: 'robot.health', method: 'GET', status: 'timeout', durationMs: 10_000 });
  hooks.poll.jobFinished(outcome({ poller: 'vehicles', tick: 1, observed: 5, failed: 1 }), 250);
  hooks.poll.observationError({
    poller: 'power',
    ref: { kind: 'vehicle', id: 'V-1', facet: 'power' },
    error: { code: 'http_503', status: 503, message: 'unavailable' },
  });
  hooks.poll.jobFailed('power');
  const event = {
    id: 'evt_1',
    type: 'vehicle.vpn.disconnected',
    time: new Date(Date.now() - 5_000).toISOString(),
  } as FleetEvent;
  hooks.events([event]);
  hooks.notifications.onSuppressed({ event, reason: 'silenced', by: 'sil_1' });
  const notification = {
    id: 'ntf-1',
    receiver: 'ops',
    groupKey: 'g',
    groupLabels: {},
    status: 'firing' as const,
    severity: 'warning' as const,
    events: [event],
    createdAt: new Date().toISOString(),
  };
  hooks.notifications.onHandedOff(notification);
  hooks.delivery({
    receiver: 'ops',
    kind: 'webhook',
    notificationId: 'ntf-1',
    outcome: { kind: 'delivered' },
    attempt: 1,
    latencyMs: 80,
  });
  await metrics
    .instrumentNotifier({ kind: 'webhook', name: 'ops', deliver: async () => ({ kind: 'delivered' }) })
    .deliver(notification, { attempt: 1 });

  const good = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
  const store = {
    async read(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
      return refs.map((ref): SnapshotRecord => {
        const state =
          ref.kind === 'fleet' && ref.id === 'upstream'
            ? { v: 1, health: { ...good, alerting: ref.facet === 'robots' } }
            : ref.kind === 'fleet'
              ? { v: 1, known: ref.id === 'vehicle' ? ['V-1', 'V-2'] : ['R-1'], missing: [] }
              : ref.facet === 'link'
                ? { v: 1, vpn: good, ip: null }
                : ref.facet === 'power'
                  ? {
                      v: 1,
                      powerCapable: true,
                      reading: { state: 'on', pending: 'off', updatedAt: null },
                      stuck: false,
                    }
                  : ref.facet === 'health'
                    ? { v: 1, health: good }
                    : {
                        v: 1,
                        autonomy: { value: { status: 2, text: 'MANUAL' } },
                        navigation: null,
                        vehicleState: null,
                      };
        return { version: 1, state };
      });
    },
  };
  const counts = async () => ({ waiting: 1, active: 0, delayed: 0, failed: 2, completed: 3 });
  metrics.bind({
    store,
    queues: [
      { name: 'poll', queue: { getJobCounts: counts } },
      { name: 'notify-ops', queue: { getJobCounts: counts }, receiver: 'ops' },
    ],
    disabled: {
      status: async (name: string) =>
        name === 'ops'
          ? { reason: 'HTTP 410', kind: 'webhook', at: new Date().toISOString(), episode: 'e1' }
          : undefined,
    },
    holds: {
      statuses: async () =>
        new Map([
          [
            'ops',
            {
              receiver: 'ops',
              since: new Date().toISOString(),
              until: new Date(Date.now() + 300_000).toISOString(),
              cause: 'throttled' as const,
              status: 503,
              reason: 'HTTP 503: retry after 99999999s',
              retryAfterMs: 99_999_999_000,
              capped: true,
            },
          ],
        ]),
    },
  });
  return metrics;
}
