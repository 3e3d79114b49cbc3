import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT } from '../../../src/events/catalogue.js';
import type { ThresholdState } from '../../../src/events/detectors/threshold.js';
import type { EventDraft, FleetEvent } from '../../../src/events/types.js';
import { RECHECK_MS } from '../../../src/notifiers/aggregation/groups.js';
import type { Suppressed } from '../../../src/notifiers/dispatch/dispatcher.js';
import { BUILTIN_INHIBIT_RULES } from '../../../src/notifiers/muting/config.js';
import { upstreamRef } from '../../../src/pollers/upstream-windows.js';
import { type SnapshotRef, SnapshotStore } from '../../../src/store/snapshot-store.js';
import { eventually } from '../../support/redis.js';
import { fleetEvent, type Replica, type Rig, route, startRig } from './helpers.js';

/**
 * Inhibition through the real notification step (dispatcher, groups in Redis, flusher, a Slack
 * stand-in), with the built-in rules. The upstream's and the robots' snapshots are written as the
 * pollers write them; the wait reads them. Guarantees are in src/notifiers/muting/mutes.ts.
 */

const GATEWAY = upstreamRef('robots');
const health = (robot: string): SnapshotRef => ({ kind: 'robot', id: robot, facet: 'health' });
const HEALTHY: ThresholdState = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
const iso = (ms: number) => new Date(ms).toISOString();

let rig: Rig;
let store: SnapshotStore;
let suppressed: Suppressed[];

beforeEach(async () => {
  rig = await startRig(`tc-${randomBytes(5).toString('hex')}`);
  store = new SnapshotStore({ redis: rig.admin, prefix: rig.prefix, installation: 'test' });
  suppressed = [];
});

afterEach(async () => {
  await rig.close();
});

function replica(maxWaitMs = 20_000): Promise<Replica> {
  return rig.replica({
    route: route({ group_by: ['type'], group_wait: 200, group_interval: 500 }),
    inhibitRules: [...BUILTIN_INHIBIT_RULES],
    inhibitMaxWait: maxWaitMs,
    hooks: { onSuppressed: (entry) => suppressed.push(entry) },
  });
}

/** Commits the next state of a snapshot, observed at `at`, with the events of `drafts`. */
async function observe(ref: SnapshotRef, at: number, state: unknown, drafts: EventDraft[] = []) {
  const [record] = await store.read([ref]);
  const result = await store.commit(ref, record?.version ?? 0, { state, observedAt: iso(at) }, drafts);
  if (!result.committed) throw new Error(`commit of ${ref.facet} lost: ${result.reason}`);
  return result.events;
}

/** A judged window of the robot gateway: healthy, or degraded (with its event, not yet dispatched). */
async function gatewayWindow(end: number, degraded: boolean): Promise<FleetEvent | undefined> {
  const state = degraded ? { alerting: true, streak: 0, streakSince: null, incidentSince: end } : HEALTHY;
  const drafts: EventDraft[] = degraded
    ? [
        {
          type: EVENT.upstreamDegraded,
          data: {
            severity: 'critical',
            upstream: 'robots',
            previous: 'healthy',
            current: 'degraded',
            since: iso(end),
            consecutiveWindows: 2,
            reasons: ['error_ratio'],
            window: { requests: 600, authFailures: 0, serverErrors: 600, timeouts: 0 },
            errorRatio: 1,
          },
        },
      ]
    : [];
  const [event] = await observe(GATEWAY, end, { v: 1, health: state }, drafts);
  return event;
}

const robotDown = (robot: string) =>
  fleetEvent('robot.health.down', `robot/${robot}`, {
    previous: 'up',
    current: 'down',
    consecutiveFailures: 3,
    lastError: { code: 'service_unavailable', status: 503 },
  });

/** Waits until `count` notifications were delivered (the stand-in answered and the worker recorded it). */
function delivered(count: number) {
  return eventually(
    async () => rig.delivered.length,
    (length) => length >= count,
  );
}

function deliveredTypes(): string[] {
  return rig.delivered.flatMap((notification) =>
    notification.events.map((event) => `${event.type} ${event.subject}`),
  );
}

describe('inhibition in the notification step', () => {
  it('inhibits a target whose source comes after the target’s own flush time (Alertmanager #2229)', async () => {
    const step = await replica();
    await gatewayWindow(Date.now() - 1_000, false);

    // The robot's alert is due 200 ms after it arrives; the gateway's window holding its time is
    // not judged yet, so the flush waits.
    const down = robotDown('r-1');
    await step.dispatch(down);
    const [groupKey] = await rig.admin.zrange(`{${rig.prefix}}:notify:wake`, '0', '0');
    await eventually(
      () => step.groups.get(groupKey ?? ''),
      (record) => record?.state.recheckAt !== undefined && record.state.pending.length === 1,
    );
    expect(rig.delivered).toEqual([]);

    // The window is judged bad, well after the robot's flush time; its event is not even
    // dispatched yet: the snapshot alone inhibits the robot.
    const degraded = await gatewayWindow(Date.now() + 500, true);
    const marks = await eventually(
      () => step.marks.read([down.id]),
      (read) => read.has(down.id),
    );
    expect(marks.get(down.id)).toMatchObject({
      reason: 'inhibited',
      by: 'upstream-robots',
      source: { type: 'monitor.upstream.degraded', subject: 'upstream/robots' },
    });
    expect(suppressed.map((entry) => [entry.event.id, entry.reason])).toEqual([[down.id, 'inhibited']]);

    // The source itself pages, once; the robot's recovery during it is not said either.
    if (!degraded) throw new Error('no degraded event');
    await step.dispatch(degraded);
    await delivered(1);
    expect(rig.texts()[0]).toContain('the robot gateway is failing: 600 of 600 requests failed');
    await step.dispatch(
      fleetEvent('robot.health.up', 'robot/r-1', { previous: 'down', current: 'up', durationMs: 2_000 }),
    );
    await eventually(
      async () => (await step.groups.get(groupKey ?? ''))?.state.incidents.toJSON() ?? {},
      (incidents) => Object.keys(incidents).length === 0,
    );
    expect(deliveredTypes()).toEqual(['monitor.upstream.degraded upstream/robots']);
    expect(suppressed.map((entry) => entry.event.type)).toEqual([EVENT.robotHealthDown, EVENT.robotHealthUp]);
  });

  it('pages an entity that fails while its upstream is healthy, once the window is judged', async () => {
    const step = await replica();
    await gatewayWindow(Date.now() - 1_000, false);
    const down = robotDown('r-7');
    await step.dispatch(down);
    await gatewayWindow(Date.now() + 200, false);
    await delivered(1);
    expect(deliveredTypes()).toEqual(['robot.health.down robot/r-7']);
    expect(suppressed).toEqual([]);
  });

  it('judges an upstream incident by the token issuer’s window of the same end, without waiting', async () => {
    const step = await replica();
    const end = Date.now();
    await observe(upstreamRef('token'), end, { v: 1, health: HEALTHY });
    const [degraded] = await observe(
      upstreamRef('fleet'),
      end,
      { v: 1, health: { ...HEALTHY, alerting: true } },
      [
        {
          type: EVENT.upstreamDegraded,
          data: {
            severity: 'critical',
            upstream: 'fleet',
            previous: 'healthy',
            current: 'degraded',
            since: iso(end),
            consecutiveWindows: 2,
            reasons: ['error_ratio'],
            window: { requests: 40, authFailures: 0, serverErrors: 40, timeouts: 0 },
            errorRatio: 1,
          },
        },
      ],
    );
    if (!degraded) throw new Error('no degraded event');
    await step.dispatch(degraded);
    await delivered(1);
    expect(deliveredTypes()).toEqual(['monitor.upstream.degraded upstream/fleet']);
  });

  it('waits at most inhibit_max_wait when the source is never judged', async () => {
    const step = await replica(1_500);
    await gatewayWindow(Date.now() - 60_000, false);
    const down = robotDown('r-8');
    await step.dispatch(down);
    const [groupKey] = await rig.admin.zrange(`{${rig.prefix}}:notify:wake`, '0', '0');
    await eventually(
      () => step.groups.get(groupKey ?? ''),
      (record) => record?.state.recheckAt !== undefined,
    );
    await delivered(1);
    expect(deliveredTypes()).toEqual(['robot.health.down robot/r-8']);
  });

  it('waits on past inhibit_max_wait while the source has a bad streak under way, until it decides', async () => {
    const step = await replica(1_500);
    await gatewayWindow(Date.now() - 1_000, false);
    const down = robotDown('r-9');
    await step.dispatch(down);
    // The window holding the robot's time is judged bad, but one bad window does not fire yet
    // (a gateway that failed in the middle of a poll round: the window before it was mixed).
    const started = Date.now() + 100;
    await observe(GATEWAY, started, {
      v: 1,
      health: { alerting: false, streak: 1, streakSince: started, incidentSince: null },
    });
    const [groupKey] = await rig.admin.zrange(`{${rig.prefix}}:notify:wake`, '0', '0');
    // The flusher looks again after inhibit_max_wait has passed and still holds the robot.
    const waitEnds = Date.parse(down.time) + 1_500;
    await eventually(
      () => step.groups.get(groupKey ?? ''),
      // A look after the wait's end sets the next one more than RECHECK_MS past that end.
      (record) => (record?.state.recheckAt ?? 0) > waitEnds + RECHECK_MS,
    );
    expect(rig.delivered).toEqual([]);

    const degraded = await gatewayWindow(Date.now() + 100, true);
    if (!degraded) throw new Error('no degraded event');
    await step.dispatch(degraded);
    await delivered(1);
    const marks = await eventually(
      () => step.marks.read([down.id]),
      (read) => read.has(down.id),
    );
    expect(marks.get(down.id)).toMatchObject({ reason: 'inhibited', by: 'upstream-robots' });
    expect(deliveredTypes()).toEqual(['monitor.upstream.degraded upstream/robots']);
  });

  it('sends the target twice inhibit_max_wait after its time when the bad streak never decides', async () => {
    const step = await replica(1_000);
    await gatewayWindow(Date.now() - 1_000, false);
    const down = robotDown('r-10');
    await step.dispatch(down);
    const started = Date.now() + 100;
    await observe(GATEWAY, started, {
      v: 1,
      health: { alerting: false, streak: 1, streakSince: started, incidentSince: null },
    });
    await delivered(1);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(down.time) + 2_000);
    expect(deliveredTypes()).toEqual(['robot.health.down robot/r-10']);
  });

  it('announces a target still firing when its source resolves — once its own state is known since', async () => {
    const step = await replica();
    const degraded = await gatewayWindow(Date.now() - 1_000, true);
    if (!degraded) throw new Error('no degraded event');
    await step.dispatch(degraded);
    await delivered(1);

    // Two robots go down during the outage: muted on arrival.
    const firing = { alerting: true, streak: 0, streakSince: null, incidentSince: Date.now() };
    await observe(health('r-2'), Date.now(), { v: 1, health: firing });
    await observe(health('r-3'), Date.now(), { v: 1, health: firing });
    await step.dispatch(robotDown('r-2'));
    await step.dispatch(robotDown('r-3'));
    expect(suppressed.map((entry) => entry.reason)).toEqual(['inhibited', 'inhibited']);

    // The gateway recovers. Neither robot has been polled since: both wait.
    const recoveredAt = Date.now() + 100;
    const [recovered] = await observe(GATEWAY, recoveredAt, { v: 1, health: HEALTHY }, [
      {
        type: EVENT.upstreamRecovered,
        data: {
          severity: 'info',
          upstream: 'robots',
          previous: 'degraded',
          current: 'healthy',
          since: degraded.time,
          durationMs: 1_100,
        },
      },
    ]);
    if (!recovered) throw new Error('no recovered event');
    await step.dispatch(recovered);
    await delivered(2);
    const [downKey] = await rig.admin.smembers(
      `{${rig.prefix}}:notify:subject:${encodeURIComponent('robot/r-2')}`,
    );
    await eventually(
      () => step.groups.get(downKey ?? ''),
      (record) => {
        const incident = record?.state.incidents.get('robot/r-2#health');
        return (
          incident !== undefined &&
          incident.firstNotifiedAt === undefined &&
          (incident.dueAt ?? 0) > recoveredAt
        );
      },
    );
    expect(rig.delivered).toHaveLength(2);

    // r-2 is polled after the recovery and still fails: it is announced. r-3 is on its way back
    // (one good check of two): it waits, and its recovery closes it without a word.
    await observe(health('r-2'), recoveredAt + 200, {
      v: 1,
      health: { ...firing, streak: 0 },
    });
    await observe(health('r-3'), recoveredAt + 200, {
      v: 1,
      health: { ...firing, streak: 1, streakSince: recoveredAt + 200 },
    });
    await delivered(3);
    expect(deliveredTypes().slice(2)).toEqual(['robot.health.down robot/r-2']);
    await step.dispatch(
      fleetEvent('robot.health.up', 'robot/r-3', { previous: 'down', current: 'up', durationMs: 3_000 }),
    );
    await eventually(
      async () => (await step.groups.get(downKey ?? ''))?.state.incidents.toJSON() ?? {},
      (incidents) => !('robot/r-3#health' in incidents),
    );
    expect(deliveredTypes()).toEqual([
      'monitor.upstream.degraded upstream/robots',
      'monitor.upstream.recovered upstream/robots',
      'robot.health.down robot/r-2',
    ]);
  });
});
