import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CHANGE_LOG_ENTRIES,
  CHANGED_FIELDS_MAX,
  FiringIncidents,
  FULL_READ_MS,
} from '../../../src/notifiers/muting/firing-incidents.js';
import { MuteMarks } from '../../../src/notifiers/muting/mute-marks.js';
import { suiteConnection } from '../../support/redis.js';
import { fleetEvent, MINUTE, SECOND, T0 } from '../routing/helpers.js';

const prefix = `tc-${randomBytes(5).toString('hex')}`;
const redis = suiteConnection(prefix);

describe('the incidents inhibition reads (Redis)', () => {
  it('lists every record of a large fleet, read a part per round trip', async () => {
    const incidents = new FiringIncidents({ redis, prefix: `${prefix}-many` });
    const subjects = Array.from({ length: 1_200 }, (_, i) => `robot/r-${i}`);
    for (const subject of subjects)
      await incidents.record(fleetEvent('robot.health.down', subject, { time: T0 }));
    const listed = await incidents.list(T0);
    expect(listed.map((record) => record.subject).sort()).toEqual([...subjects].sort());
  });

  it('hands out the last reading again when a full read finds every record as it was', async () => {
    const incidents = new FiringIncidents({ redis, prefix: `${prefix}-same` });
    // More than one scan page, so the reading is put together over several round trips.
    const subjects = Array.from({ length: 700 }, (_, i) => `robot/r-${i}`);
    for (const subject of subjects)
      await incidents.record(fleetEvent('robot.health.down', subject, { time: T0 }));
    const first = await incidents.list(T0);
    expect(first).toHaveLength(700);
    // The periodic full read, nothing changed: the same array, so the muting rebuilds nothing.
    expect(await incidents.list(T0 + FULL_READ_MS)).toBe(first);
    // The revision moved (another replica's script) but no record did.
    await redis.set(incidents.keys.firingRevision, 'moved');
    expect(await incidents.list(T0 + FULL_READ_MS + SECOND)).toBe(first);
    // One record changed: a new reading, in which the others are the same records.
    await incidents.record(fleetEvent('robot.health.up', 'robot/r-7', { time: T0 + MINUTE }));
    const changed = await incidents.list(T0 + FULL_READ_MS + 2 * SECOND);
    expect(changed).not.toBe(first);
    expect(changed).toHaveLength(700);
    const before = new Map(first.map((record) => [record.subject, record]));
    for (const record of changed) {
      if (record.subject === 'robot/r-7') expect(record).toMatchObject({ firing: false, at: T0 + MINUTE });
      else expect(record).toBe(before.get(record.subject));
    }
    // A record gone (written behind the revision's back) is a change too.
    await redis.hdel(incidents.keys.firing, 'robot/r-8#health');
    const fewer = await incidents.list(T0 + 2 * FULL_READ_MS + 2 * SECOND);
    expect(fewer).not.toBe(changed);
    expect(fewer.map((record) => record.subject)).not.toContain('robot/r-8');
  });

  describe('reading only what changed', () => {
    const stored = (time: number) =>
      JSON.stringify({ t: time, f: 1, type: 'robot.health.down', sev: 'critical', since: time });
    /** Written behind the revision's back: only a full read of the hash sees it. */
    const behindTheBack = (incidents: FiringIncidents, subject: string) =>
      redis.hset(incidents.keys.firing, `${subject}#health`, stored(T0));

    it('takes the changed fields from the log, not the whole hash', async () => {
      const incidents = new FiringIncidents({ redis, prefix: `${prefix}-log`, keepResolvedMs: 10 * MINUTE });
      const other = new FiringIncidents({ redis, prefix: `${prefix}-log` });
      for (let i = 0; i < 600; i += 1)
        await incidents.record(fleetEvent('robot.health.down', `robot/r-${i}`, { time: T0 }));
      const first = await incidents.list(T0);
      await other.list(T0);
      expect(await redis.get(incidents.keys.firingRevision)).toMatch(/:600$/);
      await behindTheBack(incidents, 'robot/hidden');
      await incidents.record(fleetEvent('robot.health.up', 'robot/r-7', { time: T0 + SECOND }));
      await incidents.record(fleetEvent('robot.removed', 'robot/r-8', { time: T0 + SECOND }));
      const second = await incidents.list(T0 + 2 * SECOND);
      // Only the logged fields were read: the one written behind the back is not there yet.
      expect(second.map((record) => record.subject)).not.toContain('robot/hidden');
      expect(second).toHaveLength(600);
      const before = new Map(first.map((record) => [record.subject, record]));
      for (const record of second) {
        if (record.subject === 'robot/r-7' || record.subject === 'robot/r-8')
          expect(record).toMatchObject({ firing: false, at: T0 + SECOND });
        else expect(record).toBe(before.get(record.subject));
      }
      // The periodic full read sees it.
      const full = await incidents.list(T0 + 10 * MINUTE);
      expect(full.map((record) => record.subject)).toContain('robot/hidden');
      await other.list(T0 + 10 * MINUTE);
      // The two resolved records age out: pruned, and a reader that keeps them longer follows the
      // deletions through the log.
      const aged = await incidents.list(T0 + 10 * MINUTE + 2 * SECOND);
      expect(aged.map((record) => record.subject)).not.toContain('robot/r-7');
      expect(await redis.hexists(incidents.keys.firing, 'robot/r-7#health')).toBe(0);
      const followed = await other.list(T0 + 10 * MINUTE + 3 * SECOND);
      expect(followed.map((record) => record.subject)).not.toContain('robot/r-8');
      expect(followed).toHaveLength(599);
    });

    it('reads in full when the log no longer reaches back to the reading', async () => {
      const incidents = new FiringIncidents({ redis, prefix: `${prefix}-trimmed` });
      await incidents.record(fleetEvent('robot.health.down', 'robot/r-0', { time: T0 }));
      await incidents.list(T0);
      await behindTheBack(incidents, 'robot/hidden');
      // One change more than the log keeps: the reading's successor is trimmed away.
      for (let i = 1; i <= CHANGE_LOG_ENTRIES + 1; i += 1)
        await incidents.record(fleetEvent('robot.health.down', `robot/r-${i}`, { time: T0 }));
      expect(await redis.llen(incidents.keys.firingLog)).toBe(CHANGE_LOG_ENTRIES);
      const listed = await incidents.list(T0 + SECOND);
      expect(listed).toHaveLength(CHANGE_LOG_ENTRIES + 3);
      expect(listed.map((record) => record.subject)).toContain('robot/hidden');
    });

    it('reads in full when more fields changed than one read takes', async () => {
      const incidents = new FiringIncidents({ redis, prefix: `${prefix}-many-fields` });
      await incidents.record(fleetEvent('robot.health.down', 'robot/r-0', { time: T0 }));
      await incidents.list(T0);
      await behindTheBack(incidents, 'robot/hidden');
      // Records resolved long ago, which another reader prunes all in one change.
      const resolved = JSON.stringify({ t: T0, f: 0, type: 'robot.health.down', sev: 'critical', since: T0 });
      await redis.hset(
        incidents.keys.firing,
        Object.fromEntries(
          Array.from({ length: CHANGED_FIELDS_MAX + 1 }, (_, i) => [`robot/p-${i}#health`, resolved]),
        ),
      );
      const pruning = new FiringIncidents({ redis, prefix: `${prefix}-many-fields`, keepResolvedMs: 1 });
      await pruning.list(T0 + MINUTE);
      expect(await redis.hlen(incidents.keys.firing)).toBe(2);
      const listed = await incidents.list(T0 + 2 * SECOND);
      expect(listed.map((record) => record.subject).sort()).toEqual(['robot/hidden', 'robot/r-0']);
    });

    it('starts a new sequence after a revision an older version wrote, and readers read in full', async () => {
      const incidents = new FiringIncidents({ redis, prefix: `${prefix}-older` });
      await incidents.record(fleetEvent('robot.health.down', 'robot/r-0', { time: T0 }));
      await incidents.list(T0);
      // An older version replaced the revision with a token of its own.
      await behindTheBack(incidents, 'robot/hidden');
      await redis.set(incidents.keys.firingRevision, 'olderVersionToken1');
      const listed = await incidents.list(T0 + SECOND);
      expect(listed.map((record) => record.subject).sort()).toEqual(['robot/hidden', 'robot/r-0']);
      // The next change starts a sequence of its own, and readings follow it from the log again.
      await incidents.record(fleetEvent('robot.health.down', 'robot/r-1', { time: T0 }));
      expect(await redis.get(incidents.keys.firingRevision)).toMatch(/^(?!olderVersionToken1).+:1$/);
      expect(await redis.lrange(incidents.keys.firingLog, 0, -1)).toEqual(['["robot\\/r-1#health"]']);
      // Read in full once more (its reading is of the older sequence), then from the log.
      expect(await incidents.list(T0 + 2 * SECOND)).toHaveLength(3);
      await behindTheBack(incidents, 'robot/hidden-2');
      await incidents.record(fleetEvent('robot.health.down', 'robot/r-2', { time: T0 }));
      const next = await incidents.list(T0 + 3 * SECOND);
      expect(next.map((record) => record.subject).sort()).toEqual([
        'robot/hidden',
        'robot/r-0',
        'robot/r-1',
        'robot/r-2',
      ]);
    });

    it('applies readings one at a time, in the order asked', async () => {
      const incidents = new FiringIncidents({ redis, prefix: `${prefix}-serial` });
      await incidents.record(fleetEvent('robot.health.down', 'robot/r-0', { time: T0 }));
      await incidents.list(T0);
      const readings = [];
      for (let i = 1; i <= 5; i += 1) {
        await incidents.record(fleetEvent('robot.health.down', `robot/r-${i}`, { time: T0 }));
        readings.push(incidents.list(T0 + i * SECOND));
      }
      const lengths = (await Promise.all(readings)).map((records) => records.length);
      expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
      expect(lengths.at(-1)).toBe(6);
    });
  });

  it('records firing and resolving events, keeps the later one whatever order they arrive in', async () => {
    const incidents = new FiringIncidents({ redis, prefix: `${prefix}-order` });
    const down = fleetEvent('robot.health.down', 'robot/r-1', { time: T0 });
    const up = { ...fleetEvent('robot.health.up', 'robot/r-1', { time: T0 + MINUTE }) };
    up.data = { ...up.data, since: new Date(T0 - 10 * SECOND).toISOString(), durationMs: 70_000 };
    await incidents.record(down);
    expect(await incidents.list(T0)).toEqual([
      {
        subject: 'robot/r-1',
        key: 'health',
        type: 'robot.health.down',
        severity: 'critical',
        firing: true,
        since: T0,
        at: T0,
      },
    ]);
    await incidents.record(up);
    // A late redelivery of the firing event does not reopen it.
    await incidents.record(down);
    expect(await incidents.list(T0 + MINUTE)).toEqual([
      {
        subject: 'robot/r-1',
        key: 'health',
        type: 'robot.health.down',
        severity: 'critical',
        firing: false,
        since: T0 - 10 * SECOND,
        at: T0 + MINUTE,
      },
    ]);
    // Events of no incident change nothing.
    await incidents.record(fleetEvent('robot.state.changed', 'robot/r-1', { time: T0 + 2 * MINUTE }));
    expect(await incidents.list(T0 + MINUTE)).toHaveLength(1);
  });

  it('hands out the same record while its stored JSON is unchanged, and decodes a changed one again', async () => {
    const incidents = new FiringIncidents({ redis, prefix: `${prefix}-reuse` });
    await incidents.record(fleetEvent('robot.health.down', 'robot/r-1', { time: T0 }));
    await incidents.record(fleetEvent('robot.health.down', 'robot/r-2', { time: T0 }));
    const bySubject = async (now: number) =>
      new Map((await incidents.list(now)).map((record) => [record.subject, record]));
    const first = await bySubject(T0);
    await incidents.record(fleetEvent('robot.health.up', 'robot/r-2', { time: T0 + MINUTE }));
    const second = await bySubject(T0 + MINUTE);
    expect(second.get('robot/r-1')).toBe(first.get('robot/r-1'));
    expect(second.get('robot/r-2')).not.toBe(first.get('robot/r-2'));
    expect(second.get('robot/r-2')).toMatchObject({ firing: false, at: T0 + MINUTE });
    // A field no longer readable is pruned, though its earlier record was kept (written behind the
    // revision's back, it is seen at the next full read).
    await redis.hset(incidents.keys.firing, 'robot/r-1#health', '{"t":');
    expect([...(await bySubject(T0 + MINUTE + FULL_READ_MS)).keys()]).toEqual(['robot/r-2']);
    expect(await redis.hexists(incidents.keys.firing, 'robot/r-1#health')).toBe(0);
  });

  it('reads the hash again only when its revision moved, a resolved record aged out, or ten minutes passed', async () => {
    const incidents = new FiringIncidents({
      redis,
      prefix: `${prefix}-revision`,
      keepResolvedMs: 10 * MINUTE,
    });
    const other = new FiringIncidents({ redis, prefix: `${prefix}-revision` });
    await incidents.record(fleetEvent('robot.health.down', 'robot/r-1', { time: T0 }));
    const first = await incidents.list(T0);
    // Nothing changed: the same reading, not a new one.
    expect(await incidents.list(T0 + SECOND)).toBe(first);
    // Another replica's change moves the revision.
    await other.record(fleetEvent('robot.health.down', 'robot/r-2', { time: T0 + SECOND }));
    const second = await incidents.list(T0 + 2 * SECOND);
    expect(second).not.toBe(first);
    expect(second.map((record) => record.subject).sort()).toEqual(['robot/r-1', 'robot/r-2']);
    // An event of no incident changes nothing.
    await other.record(fleetEvent('robot.state.changed', 'robot/r-1', { time: T0 + 2 * SECOND }));
    expect(await incidents.list(T0 + 3 * SECOND)).toBe(second);
    // A removal closes (and so changes) records.
    await other.record(fleetEvent('robot.removed', 'robot/r-2', { time: T0 + 3 * SECOND }));
    const third = await incidents.list(T0 + 4 * SECOND);
    expect(third.find((record) => record.subject === 'robot/r-2')?.firing).toBe(false);
    expect(await incidents.list(T0 + 5 * SECOND)).toBe(third);
    // The resolved record ages out with no change to the hash: read again, and pruned.
    const aged = await incidents.list(T0 + 3 * SECOND + 10 * MINUTE + 1);
    expect(aged.map((record) => record.subject)).toEqual(['robot/r-1']);
    expect(await redis.hexists(incidents.keys.firing, 'robot/r-2#health')).toBe(0);
    // Written behind the revision's back (not by these scripts): seen at the next full read.
    const now = T0 + 11 * MINUTE;
    const settled = await incidents.list(now);
    await redis.hset(
      incidents.keys.firing,
      'robot/r-9#health',
      JSON.stringify({ t: now, f: 1, type: 'robot.health.down', sev: 'critical', since: now }),
    );
    expect(await incidents.list(now + SECOND)).toBe(settled);
    const late = await incidents.list(now + FULL_READ_MS);
    expect(late.map((record) => record.subject).sort()).toEqual(['robot/r-1', 'robot/r-9']);
  });

  it('closes every incident of a removed entity, and prunes resolved ones after keepResolvedMs', async () => {
    const incidents = new FiringIncidents({
      redis,
      prefix: `${prefix}-removed`,
      keepResolvedMs: 10 * MINUTE,
    });
    await incidents.record(fleetEvent('vehicle.vpn.disconnected', 'vehicle/v-1', { time: T0 }));
    await incidents.record(fleetEvent('vehicle.unreachable', 'vehicle/v-1', { time: T0 }));
    await incidents.record(fleetEvent('vehicle.vpn.disconnected', 'vehicle/v-2', { time: T0 }));
    await incidents.record(fleetEvent('vehicle.removed', 'vehicle/v-1', { time: T0 + MINUTE }));
    const listed = await incidents.list(T0 + MINUTE);
    expect(listed.map((record) => [record.subject, record.key, record.firing]).sort()).toEqual([
      ['vehicle/v-1', 'reachability', false],
      ['vehicle/v-1', 'vpn', false],
      ['vehicle/v-2', 'vpn', true],
    ]);
    expect((await incidents.list(T0 + 12 * MINUTE)).map((record) => record.subject)).toEqual(['vehicle/v-2']);
    expect(await redis.hlen(incidents.keys.firing)).toBe(1);
  });
});

describe('mute marks (Redis)', () => {
  it('keeps the first mark of an event and only the newest `cap` marks', async () => {
    const marks = new MuteMarks({ redis, prefix: `${prefix}-marks`, cap: 3 });
    const inhibited = {
      reason: 'inhibited' as const,
      by: 'upstream-robots',
      source: { type: 'monitor.upstream.degraded', subject: 'upstream/robots' },
    };
    expect(await marks.mark('e-1', inhibited, T0)).toBe(true);
    expect(await marks.mark('e-1', { reason: 'silenced', by: 'sil_1' }, T0 + 1)).toBe(false);
    for (const [i, id] of ['e-2', 'e-3', 'e-4'].entries()) {
      await marks.mark(id, { reason: 'maintenance', by: 'w' }, T0 + 10 + i);
    }
    const read = await marks.read(['e-1', 'e-2', 'e-3', 'e-4', 'e-5']);
    expect([...read.keys()]).toEqual(['e-2', 'e-3', 'e-4']);
    expect(await redis.hlen(marks.keys.muted)).toBe(3);
    expect(await redis.zcard(marks.keys.mutedOrder)).toBe(3);
    const fresh = new MuteMarks({ redis, prefix: `${prefix}-marks2` });
    await fresh.mark('e-9', inhibited, T0);
    expect((await fresh.read(['e-9'])).get('e-9')).toEqual({ ...inhibited, at: T0 });
  });
});
