import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Suppressed } from '../../../src/notifiers/dispatch/dispatcher.js';
import { groupFor } from '../../../src/notifiers/routing/labels.js';
import { eventually } from '../../support/redis.js';
import { fleetEvent, RECEIVER, type Rig, route, shuffled, startRig, vpnBack, vpnLost } from './helpers.js';

let rig: Rig;

beforeEach(async () => {
  rig = await startRig();
});

afterEach(async () => {
  await rig.close();
});

const vpnGroupKey = (over = {}) => {
  const config = route(over);
  return groupFor(vpnLost('any'), {}, { routeId: '0', receiver: config.receiver, groupBy: config.group_by })
    .key;
};

const ids = (count: number) =>
  Array.from({ length: count }, (_, index) => `veh-${String(index + 1).padStart(4, '0')}`);

describe('dispatching events into groups', () => {
  it('40 vehicles losing VPN within the window, taken by two replicas at once (and twice), make ONE message listing them', async () => {
    const timing = { group_wait: 800, group_interval: 1_000 };
    // The replicas' clock stands still while the events arrive: the window stays open however
    // long the dispatching takes (their flushers run all the while), and closes when the test
    // moves the clock on.
    let clock = Date.now();
    const now = () => clock;
    const one = await rig.replica({ route: route(timing), now });
    const two = await rig.replica({ route: route(timing), now });
    const events = ids(40).map((id) => vpnLost(id));
    // Both replicas take every event (the at-least-once queue redelivering to another replica),
    // one of them twice, in different orders and all at once.
    await Promise.all([
      ...shuffled(events, 7).map((event) => one.dispatch(event)),
      ...shuffled(events, 11).map((event) => two.dispatch(event)),
      ...shuffled(events, 13).map((event) => two.dispatch(event)),
    ]);
    const key = vpnGroupKey(timing);
    expect((await one.groups.get(key))?.state.pending).toHaveLength(40);
    expect(rig.posts()).toHaveLength(0);
    clock += timing.group_wait;

    await rig.standin.waitFor(1, 10_000);
    // Settled: nothing pending or outgoing, so no second message can come from these events.
    await eventually(
      () => one.groups.get(key),
      (record) => record !== undefined && record.state.pending.length === 0 && record.outgoing.length === 0,
    );
    await eventually(
      async () => rig.delivered.length,
      (count) => count >= 1,
    );
    expect(rig.posts()).toHaveLength(1);
    const [notification] = rig.delivered;
    expect(notification?.events.map((event) => event.id).sort()).toEqual(
      events.map((event) => event.id).sort(),
    );
    // The delivery job is marked completed just after its notification was delivered.
    const jobs = one.queues.get(RECEIVER);
    if (!jobs) throw new Error('no delivery queue');
    const counts = await eventually(
      () => jobs.getJobCounts('completed', 'waiting', 'active', 'delayed'),
      (counts) => (counts.completed ?? 0) > 0,
    );
    expect(counts).toEqual({
      completed: 1,
      waiting: 0,
      active: 0,
      delayed: 0,
    });
    const [text] = rig.texts();
    expect(text).toContain('40 vehicles are off the VPN');
    for (const id of ids(40)) expect(text).toContain(id);
  });

  it('a later burst into the same group is one more message with only the new events, redeliveries of flushed events dropped', async () => {
    const one = await rig.replica();
    const two = await rig.replica();
    const first = ids(5).map((id) => vpnLost(id));
    await Promise.all(first.map((event) => one.dispatch(event)));
    await eventually(
      async () => rig.delivered.length,
      (count) => count === 1,
    );

    const second = ['veh-0100', 'veh-0101'].map((id) => vpnLost(id));
    const results = await Promise.all([
      ...[...first, ...second].map((event) => two.dispatch(event)),
      ...second.map((event) => one.dispatch(event)),
    ]);
    expect(results.slice(0, 5).every((result) => result.added === 0)).toBe(true);
    await eventually(
      async () => rig.delivered.length,
      (count) => count === 2,
    );
    expect(rig.delivered[1]?.events.map((event) => event.subject).sort()).toEqual([
      'vehicle/veh-0100',
      'vehicle/veh-0101',
    ]);
    const all = rig.delivered.flatMap((notification) => notification.events.map((event) => event.id));
    expect(new Set(all).size).toBe(all.length);
    expect(new Set(rig.delivered.map((notification) => notification.id)).size).toBe(2);
  });

  it('silences suppress while active and stop after expiry; the silenced incident is then announced', async () => {
    const suppressed: Suppressed[] = [];
    const replica = await rig.replica({ hooks: { onSuppressed: (entry) => suppressed.push(entry) } });
    const added = await replica.silences.add(
      {
        matchers: { type: 'vehicle.vpn.*', subject: 'vehicle/veh-0003' },
        duration: '1h',
        comment: 'VPN gateway work',
      },
      Date.now(),
      'alice',
    );
    if (!added.ok) throw new Error(added.problems.join('; '));
    const muted = vpnLost('veh-0003');
    await replica.dispatch(muted);
    await replica.dispatch(muted);
    await replica.dispatch(vpnLost('veh-0004'));
    expect(suppressed).toEqual([{ event: muted, reason: 'silenced', by: added.silence.id }]);

    const [first] = await rig.standin.waitFor(1);
    expect(rig.texts()[0]).toContain('veh-0004 is off the VPN');
    expect(rig.texts()[0]).not.toContain('veh-0003');
    // The flusher has looked at the muted incident at least once since and kept it quiet.
    const key = vpnGroupKey();
    await eventually(
      () => replica.groups.get(key),
      (record) => {
        const incident = record?.state.incidents.get('vehicle/veh-0003#vpn');
        return incident !== undefined && (incident.dueAt ?? 0) > incident.openedAt + 500;
      },
    );
    expect(rig.posts()).toHaveLength(1);

    await replica.silences.expire(added.silence.id, Date.now());
    await rig.standin.waitFor(2);
    expect(rig.texts()[1]).toContain('veh-0003 is off the VPN');
    expect(rig.delivered[1]?.reminder).toBeUndefined();
    // After expiry the subject's events are notified again.
    await replica.dispatch(vpnBack('veh-0003', 45_000));
    await rig.standin.waitFor(3);
    expect(rig.texts()[2]).toMatch(/Resolved: veh-0003 is back on the VPN.* after 45s/);
    expect(suppressed).toHaveLength(1);
    expect(first?.status).toBe(200);
  });

  it('a maintenance window covering now suppresses what it matches', async () => {
    const suppressed: Suppressed[] = [];
    const replica = await rig.replica({
      maintenance: [
        {
          name: 'vpn-upgrade',
          schedule: '* * * * *',
          duration: 3_600_000,
          time_zone: 'UTC',
          match: { type: 'vehicle.vpn.*' },
        },
      ],
      hooks: { onSuppressed: (entry) => suppressed.push(entry) },
    });
    const muted = vpnLost('veh-0007');
    await replica.dispatch(muted);
    await replica.dispatch(fleetEvent('robot.health.down', 'robot/rb-0001'));
    expect(suppressed).toEqual([{ event: muted, reason: 'maintenance', by: 'vpn-upgrade' }]);

    await rig.standin.waitFor(1);
    expect(rig.texts()[0]).toContain('rb-0001');
    const key = vpnGroupKey();
    await eventually(
      () => replica.groups.get(key),
      (record) => {
        const incident = record?.state.incidents.get('vehicle/veh-0007#vpn');
        return incident !== undefined && (incident.dueAt ?? 0) > incident.openedAt + 1_000;
      },
    );
    expect(rig.posts()).toHaveLength(1);
    expect(rig.texts().join('\n')).not.toContain('veh-0007');
  });

  it('a removed vehicle closes its incidents in the other groups', async () => {
    const replica = await rig.replica();
    await replica.dispatch(vpnLost('veh-0020'));
    await rig.standin.waitFor(1);
    const key = vpnGroupKey();
    expect(Object.keys((await replica.groups.get(key))?.state.incidents.toJSON() ?? {})).toEqual([
      'vehicle/veh-0020#vpn',
    ]);
    expect(await replica.groups.groupsOfSubject('vehicle/veh-0020')).toEqual([key]);

    const result = await replica.dispatch(fleetEvent('vehicle.removed', 'vehicle/veh-0020'));
    expect(result.closedElsewhere).toBe(1);
    expect((await replica.groups.get(key))?.state.incidents.size).toBe(0);
    expect(await replica.groups.groupsOfSubject('vehicle/veh-0020')).toEqual([]);
    await rig.standin.waitFor(2);
    expect(rig.texts()[1]).toContain('veh-0020');
  });

  it('an acknowledgement goes to the groups holding its incident and shows in their next message', async () => {
    const replica = await rig.replica();
    await replica.dispatch(vpnLost('veh-0030'));
    await rig.standin.waitFor(1);
    const ack = fleetEvent('incident.acknowledged', 'incident/vpn-veh-0030-0a0b0c0d', {
      incident: 'vpn-veh-0030-0a0b0c0d',
      entity: 'vehicle/veh-0030',
      key: 'vpn',
      firing: 'vehicle.vpn.disconnected',
      since: new Date().toISOString(),
      by: 'dana',
      comment: 'on it',
      until: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(await replica.dispatch(ack)).toEqual({ groups: 1, added: 1, closedElsewhere: 0 });
    // Taken once, however often it is delivered.
    expect(await replica.dispatch(ack)).toEqual({ groups: 1, added: 0, closedElsewhere: 0 });
    expect(
      (await replica.groups.get(vpnGroupKey()))?.state.incidents.get('vehicle/veh-0030#vpn')?.ack,
    ).toEqual({
      by: 'dana',
      comment: 'on it',
      until: Date.parse(String(ack.data.until)),
    });
    await rig.standin.waitFor(2);
    expect(rig.texts()[1]).toContain('veh-0030 is off the VPN: acknowledged by dana: on it');
    // An incident no group holds: nothing to do.
    const other = { ...ack, id: 'evt-other', data: { ...ack.data, entity: 'vehicle/veh-9999' } };
    expect(await replica.dispatch(other)).toEqual({ groups: 0, added: 0, closedElsewhere: 0 });
  });

  it('with no route configured, events complete without touching Redis', async () => {
    const replica = await rig.replica({ route: undefined });
    expect(await replica.dispatch(vpnLost('veh-0001'))).toEqual({ groups: 0, added: 0, closedElsewhere: 0 });
    expect(await rig.admin.keys(`{${rig.prefix}}:notify:*`)).toEqual([]);
  });
});
