import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../../src/events/types.js';
import type { Notification } from '../../../../src/notifiers/notifier.js';
import {
  type FoldOptions,
  type FoldPlan,
  type FoldState,
  groupAlertKey,
  LISTED_INCIDENTS,
  NO_FOLDS,
  planFolded,
} from '../../../../src/notifiers/receivers/pagerduty/fold.js';
import {
  DEFAULT_SEVERITY_MAP,
  type PlannedEvent,
  planEvents,
} from '../../../../src/notifiers/receivers/pagerduty/index.js';
import { validateEvent } from '../../../support/pagerduty-standin.js';
import { acknowledged, event, notification, vehicleId, vpnBack, vpnLost } from '../slack/fixtures.js';

const OPTIONS: FoldOptions = { severityMap: DEFAULT_SEVERITY_MAP, changes: 'trigger', foldAbove: 20 };
const ROUTING_KEY = 'a'.repeat(32);
const GROUP = 'test/group/ops-slack/type=vehicle.vpn.disconnected';

/** The fold record as the Redis scripts keep it (fold-store.ts), for plans in a row. */
class Record {
  readonly foldedInto = new Map<string, string>();
  readonly counts = new Map<string, number>();

  get state(): FoldState {
    return { foldedInto: new Map(this.foldedInto), counts: new Map(this.counts) };
  }

  apply(plan: FoldPlan, stage: 'fold' | 'all' = 'all'): void {
    for (const [group, keys] of plan.fold) {
      for (const key of keys) {
        if (this.foldedInto.has(key)) continue;
        this.foldedInto.set(key, group);
        this.counts.set(group, (this.counts.get(group) ?? 0) + 1);
      }
    }
    if (stage === 'fold') return;
    for (const [group, keys] of plan.release) {
      for (const key of keys) {
        if (this.foldedInto.get(key) !== group) continue;
        this.foldedInto.delete(key);
        const left = (this.counts.get(group) ?? 0) - 1;
        if (left > 0) this.counts.set(group, left);
        else this.counts.delete(group);
      }
    }
  }
}

/** A notification of the group `type=vehicle.vpn.disconnected`, which its resolutions join. */
function inGroup(events: FleetEvent[], overrides: Partial<Notification> = {}): Notification {
  return notification(events, {
    groupKey: 'type=vehicle.vpn.disconnected',
    groupLabels: { type: 'vehicle.vpn.disconnected' },
    ...overrides,
  });
}

function plan(
  events: FleetEvent[],
  state: FoldState = NO_FOLDS,
  options: Partial<FoldOptions> = {},
  overrides: Partial<Notification> = {},
) {
  const planned = planFolded(inGroup(events, overrides), { ...OPTIONS, ...options }, state);
  for (const item of [...planned.alerts, ...planned.groups])
    expect(validateEvent({ routing_key: ROUTING_KEY, ...item }, ROUTING_KEY)).toEqual([]);
  return planned;
}

const actions = (planned: readonly PlannedEvent[]) =>
  planned.map((item) => [item.event_action, item.dedup_key]);
const lost = (count: number, from = 1) =>
  Array.from({ length: count }, (_, index) => vpnLost(vehicleId(from + index), index));
const back = (count: number, from = 1) =>
  Array.from({ length: count }, (_, index) => vpnBack(vehicleId(from + index), 60_000 + index));
const key = (index: number) => `test/vehicle/${vehicleId(index)}#vpn`;

describe('planFolded: a storm becomes one alert of its group', () => {
  it('sends up to fold_above new incidents alert by alert, as planEvents does', () => {
    const events = [...lost(20), acknowledged('veh-0001', 5), vpnBack('veh-0002', 9)];
    const planned = plan(events);
    expect(planned.alerts).toEqual(planEvents(inGroup(events), OPTIONS));
    expect(planned.groups).toEqual([]);
    expect(planned.fold.size + planned.release.size).toBe(0);
  });

  it('folds more than fold_above new incidents into one trigger of the group alert', () => {
    const planned = plan(lost(300));
    expect(planned.alerts).toEqual([]);
    expect(planned.fold).toEqual(new Map([[GROUP, Array.from({ length: 300 }, (_, i) => key(i + 1))]]));
    expect(actions(planned.groups)).toEqual([['trigger', GROUP]]);
    const [trigger] = planned.groups;
    expect(trigger?.payload).toMatchObject({
      summary: '300 vehicles are off the VPN: 300 incidents in this alert',
      source: 'group type=vehicle.vpn.disconnected',
      severity: 'warning',
      component: 'vehicle',
      class: 'vehicle.vpn.disconnected',
      group: 'test',
      custom_details: {
        group: 'type=vehicle.vpn.disconnected',
        group_labels: { type: 'vehicle.vpn.disconnected' },
        open_incidents: 300,
        more_incidents: 300 - LISTED_INCIDENTS,
      },
    });
    const listed = trigger?.payload?.custom_details.incidents as string[];
    expect(listed).toHaveLength(LISTED_INCIDENTS);
    expect(listed[0]).toBe('vehicle/veh-0001#vpn');
    expect(groupAlertKey(inGroup(lost(1)))).toBe(GROUP);
  });

  it('folds the rest of the storm into the open group alert, however few', () => {
    const record = new Record();
    record.apply(plan(lost(300)));
    const planned = plan(lost(2, 301), record.state);
    expect(planned.alerts).toEqual([]);
    expect(actions(planned.groups)).toEqual([['trigger', GROUP]]);
    expect(planned.groups[0]?.payload?.summary).toBe(
      '2 vehicles are off the VPN: 302 incidents in this alert',
    );
  });

  it('sends nothing while folded incidents resolve, and resolves the group alert with the last', () => {
    const record = new Record();
    record.apply(plan(lost(300)));
    const first = plan(back(299), record.state);
    expect([...first.alerts, ...first.groups]).toEqual([]);
    expect(first.release.get(GROUP)).toHaveLength(299);
    record.apply(first);
    expect(record.counts.get(GROUP)).toBe(1);
    const last = plan(back(1, 300), record.state);
    expect(actions([...last.alerts, ...last.groups])).toEqual([['resolve', GROUP]]);
    record.apply(last);
    expect(record.foldedInto.size + record.counts.size).toBe(0);
  });

  it('triggers the group alert again for a reminder, and ignores acknowledgements of folded incidents', () => {
    const record = new Record();
    record.apply(plan(lost(30)));
    const acknowledging = plan([acknowledged('veh-0003', 50)], record.state);
    expect([...acknowledging.alerts, ...acknowledging.groups]).toEqual([]);
    const reminder = plan(lost(30), record.state, {}, { reminder: { firstNotifiedAt: '', count: 1 } });
    expect(actions([...reminder.alerts, ...reminder.groups])).toEqual([['trigger', GROUP]]);
    expect(reminder.fold.size + reminder.release.size).toBe(0);
  });

  it('folds nothing new in a reminder: its incidents are PagerDuty’s alerts already', () => {
    const record = new Record();
    for (let from = 1; from <= 40; from += 20) record.apply(plan(lost(20, from)));
    expect(record.foldedInto.size).toBe(0);
    const reminder = plan(lost(40), record.state, {}, { reminder: { firstNotifiedAt: '', count: 1 } });
    expect(reminder.alerts).toHaveLength(40);
    expect(reminder.fold.size + reminder.groups.length).toBe(0);
  });

  it('keeps alone the incidents PagerDuty already has alone, and folds only the new ones', () => {
    const record = new Record();
    record.apply(plan(lost(5)));
    const storm = plan([...back(2), ...lost(40, 1)], record.state);
    // veh-0001 and veh-0002 resolved and fired again: their own alerts are resolved, then folded.
    expect(actions(storm.alerts)).toEqual([
      ['resolve', key(1)],
      ['resolve', key(2)],
    ]);
    expect(storm.fold.get(GROUP)).toHaveLength(40);
  });

  it('folds more than fold_above changes into one trigger under the notification id', () => {
    const powers = Array.from({ length: 25 }, (_, index) =>
      event('vehicle.power.changed', vehicleId(index + 1), {
        severity: 'info',
        previous: 'off',
        current: 'on',
      }),
    );
    const planned = plan(powers);
    expect(planned.alerts).toEqual([]);
    expect(actions(planned.groups)).toEqual([['trigger', 'test/event/ntf-0001']]);
    expect(planned.groups[0]?.payload?.custom_details.events).toHaveLength(25);
    expect(plan(powers, NO_FOLDS, { changes: 'skip' }).groups).toEqual([]);
  });

  it('a retry after the fold was recorded sends the group trigger, not the incidents', () => {
    const record = new Record();
    const first = plan(lost(50));
    record.apply(first, 'fold');
    const retry = plan(lost(50), record.state);
    expect(retry.alerts).toEqual([]);
    expect(actions(retry.groups)).toEqual(actions(first.groups));
    expect(retry.groups[0]?.payload?.summary).toBe(first.groups[0]?.payload?.summary);
  });
});

/**
 * A model of PagerDuty (open alert keys) against fleetwatch's incidents: after any sequence of
 * notifications, every open incident is under exactly one open alert, its own or its group's, and
 * no alert is open without one — and a notification planned twice (a retry after its fold was
 * recorded) changes nothing more.
 */
describe('planFolded against a model of PagerDuty', () => {
  type Step = { fire: number[]; resolve: number[] | 'all'; remind: boolean; retry: boolean };
  const steps = fc.array(
    fc.record({
      fire: fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 50 }),
      resolve: fc.oneof(
        fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 50 }),
        fc.constant('all'),
      ),
      remind: fc.boolean(),
      retry: fc.boolean(),
    }),
    { maxLength: 12 },
  );

  function send(alerts: Set<string>, planned: readonly PlannedEvent[]): void {
    for (const item of planned) {
      if (item.event_action === 'trigger') alerts.add(item.dedup_key);
      if (item.event_action === 'resolve') alerts.delete(item.dedup_key);
    }
  }

  /** The notification a step makes: incidents close and open (a closed one may open again), or a reminder. */
  function made(step: Step, index: number, open: Set<number>): Notification | undefined {
    if (step.remind) {
      const still = step.fire.filter((id) => open.has(id));
      if (still.length === 0) return undefined;
      return inGroup(
        still.map((id) => vpnLost(vehicleId(id), index)),
        { id: `ntf-${index}`, reminder: { firstNotifiedAt: '', count: 1 } },
      );
    }
    const resolving = step.resolve === 'all' ? [...open] : step.resolve.filter((id) => open.has(id));
    const firing = step.fire.filter((id) => !open.has(id) || resolving.includes(id));
    const events = [
      ...resolving.map((id) => vpnBack(vehicleId(id), index * 1_000)),
      ...firing.map((id) => vpnLost(vehicleId(id), index * 1_000 + 1)),
    ];
    for (const id of resolving) open.delete(id);
    for (const id of firing) open.add(id);
    return events.length === 0 ? undefined : inGroup(events, { id: `ntf-${index}` });
  }

  it('keeps every open incident under exactly one open alert, through retries', () => {
    fc.assert(
      fc.property(steps, fc.integer({ min: 1, max: 30 }), (sequence: Step[], foldAbove) => {
        const record = new Record();
        const alerts = new Set<string>();
        const open = new Set<number>();
        const options = { ...OPTIONS, foldAbove };
        sequence.forEach((step, index) => {
          const notified = made(step, index, open);
          if (!notified) return;
          const first = planFolded(notified, options, record.state);
          if (step.retry) {
            // The first attempt sent its own alerts and recorded the fold, then failed.
            send(alerts, first.alerts);
            record.apply(first, 'fold');
          }
          const planned = step.retry ? planFolded(notified, options, record.state) : first;
          send(alerts, planned.alerts);
          record.apply(planned, 'fold');
          send(alerts, planned.groups);
          record.apply({ ...planned, fold: new Map() });
          const expected = new Set<string>();
          for (const id of open) expected.add(record.foldedInto.get(key(id)) ?? key(id));
          expect([...alerts].sort()).toEqual([...expected].sort());
          for (const folded of record.foldedInto.keys())
            expect(open.has(Number(folded.slice(17, 21)))).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });
});
