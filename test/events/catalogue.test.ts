import { describe, expect, it } from 'vitest';
import {
  anyFleetEventSchema,
  CATALOGUE,
  catalogueEntry,
  draft,
  draftDataSchema,
  EVENT,
  FLEET_EVENT_TYPES,
  fleetEventSchema,
  validateDraft,
} from '../../src/events/catalogue.js';
import { toFleetEvent } from '../../src/events/cloud-event.js';

/** The types ARCHITECTURE.md's Events table names. */
const DESIGN_TYPES = [
  'vehicle.discovered',
  'vehicle.removed',
  'vehicle.vpn.disconnected',
  'vehicle.vpn.connected',
  'vehicle.ip.changed',
  'vehicle.power.changed',
  'vehicle.power.command.pending',
  'vehicle.power.command.completed',
  'vehicle.power.command.stuck',
  'vehicle.power.report.stale',
  'vehicle.unreachable',
  'vehicle.reachable',
  'robot.discovered',
  'robot.removed',
  'robot.health.down',
  'robot.health.up',
  'robot.autonomy.changed',
  'robot.navigation.changed',
  'robot.state.changed',
  'robot.lease.changed',
  'robot.config.changed',
  'monitor.upstream.degraded',
  'monitor.upstream.recovered',
];

const envelope = { id: 'evt-1', source: 'fleetwatch/prod', time: '2025-03-01T12:00:00.000Z' };

describe('event catalogue', () => {
  it("covers every type of ARCHITECTURE.md's Events table", () => {
    for (const type of DESIGN_TYPES) expect(FLEET_EVENT_TYPES).toContain(type);
  });

  it('has one entry per constant, each type once', () => {
    expect(new Set(FLEET_EVENT_TYPES).size).toBe(Object.keys(EVENT).length);
    expect(CATALOGUE.map((entry) => entry.type)).toEqual(FLEET_EVENT_TYPES);
  });

  it('pairs every incident: one firing and one resolving type per key, pointing at each other', () => {
    const byKey = new Map<string, string[]>();
    for (const entry of CATALOGUE) {
      if (!entry.incident) continue;
      const { key, role, counterpart } = entry.incident;
      const other = catalogueEntry(counterpart).incident;
      expect(other?.key).toBe(key);
      expect(other?.counterpart).toBe(entry.type);
      expect(other?.role).toBe(role === 'fires' ? 'resolves' : 'fires');
      byKey.set(key, [...(byKey.get(key) ?? []), entry.type]);
    }
    expect([...byKey.keys()].sort()).toEqual([
      'backlog',
      'health',
      'list',
      'pace',
      'reachability',
      'stale',
      'stuck',
      'upstream',
      'vpn',
    ]);
    for (const types of byKey.values()) expect(types).toHaveLength(2);
  });

  it('makes every resolving event carry durationMs and since', () => {
    for (const entry of CATALOGUE.filter((e) => e.incident?.role === 'resolves')) {
      const shape = draftDataSchema(entry.type).shape;
      expect(shape, entry.type).toHaveProperty('durationMs');
      expect(shape, entry.type).toHaveProperty('since');
    }
  });

  it('fills the default severity in drafts and lets navigation override it', () => {
    expect(draft(EVENT.vehicleDiscovered, { vehicleId: 'v-1' }).data.severity).toBe('info');
    expect(
      draft(EVENT.robotHealthDown, {
        previous: 'up',
        current: 'down',
        since: envelope.time,
        consecutiveFailures: 3,
        lastError: { code: 'timeout' },
      }).data.severity,
    ).toBe('critical');
    const aborted = draft(EVENT.robotNavigationChanged, {
      severity: 'warning',
      previous: { status: 2, text: null },
      current: { status: 6, text: null },
    });
    expect(aborted.data.severity).toBe('warning');
    expect(validateDraft(aborted)).toEqual({ ok: true });
  });

  it('rejects drafts of unknown types, with missing fields or with stray fields', () => {
    expect(validateDraft({ type: 'vehicle.exploded', data: { severity: 'critical' } }).ok).toBe(false);
    expect(validateDraft({ type: EVENT.vehicleDiscovered, data: { severity: 'info' } }).ok).toBe(false);
    expect(
      validateDraft({
        type: EVENT.ipChanged,
        data: { severity: 'info', previous: null, current: 'x', extra: 1 },
      }).ok,
    ).toBe(false);
  });
});

describe('CloudEvents', () => {
  it('builds the event from a membership draft, taking the subject from the data', () => {
    const event = toFleetEvent(draft(EVENT.vehicleDiscovered, { vehicleId: 'v-7' }), envelope);
    expect(event).toEqual({
      specversion: '1.0',
      ...envelope,
      type: 'vehicle.discovered',
      subject: 'vehicle/v-7',
      datacontenttype: 'application/json',
      data: { severity: 'info', vehicleId: 'v-7' },
    });
    expect(fleetEventSchema(EVENT.vehicleDiscovered).safeParse(event).success).toBe(true);
    expect(anyFleetEventSchema.safeParse(event).success).toBe(true);
  });

  it('builds the event from a per-entity draft with the entity the caller polled', () => {
    const event = toFleetEvent(
      draft(EVENT.robotLeaseChanged, { previous: null, current: 'alice', expiresAt: null }),
      { ...envelope, entityId: 'dev/1' },
    );
    expect(event.subject).toBe('robot/dev/1');
    expect(event.data.deviceId).toBe('dev/1');
    expect(fleetEventSchema(EVENT.robotLeaseChanged).safeParse(event).success).toBe(true);
  });

  it('refuses a draft without an entity, and a subject that disagrees with the data', () => {
    const orphan = draft(EVENT.ipChanged, { previous: null, current: '10.0.0.1' });
    expect(() => toFleetEvent(orphan, envelope)).toThrow(/no vehicle/);
    const event = toFleetEvent(orphan, { ...envelope, entityId: 'v-1' });
    expect(fleetEventSchema(EVENT.ipChanged).safeParse({ ...event, subject: 'vehicle/v-2' }).success).toBe(
      false,
    );
    expect(fleetEventSchema(EVENT.ipChanged).safeParse({ ...event, subject: 'robot/v-1' }).success).toBe(
      false,
    );
    expect(anyFleetEventSchema.safeParse({ ...event, type: 'vehicle.exploded' }).success).toBe(false);
  });

  it('requires the entity field and a time with an offset in published events', () => {
    const event = toFleetEvent(
      draft(EVENT.upstreamRecovered, {
        previous: 'degraded',
        current: 'healthy',
        since: envelope.time,
        durationMs: 5,
      }),
      { ...envelope, entityId: 'fleet' },
    );
    expect(event.subject).toBe('upstream/fleet');
    const schema = fleetEventSchema(EVENT.upstreamRecovered);
    expect(schema.safeParse(event).success).toBe(true);
    const { upstream: _gone, ...data } = event.data;
    expect(schema.safeParse({ ...event, data }).success).toBe(false);
    expect(schema.safeParse({ ...event, time: '2025-03-01 12:00' }).success).toBe(false);
  });
});
