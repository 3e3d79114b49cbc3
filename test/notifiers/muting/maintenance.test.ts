import { describe, expect, it } from 'vitest';
import { maintenanceSchema } from '../../../src/notifiers/muting/config.js';
import {
  cronProblem,
  earliestFireAfter,
  instantOfWallClock,
  latestFireAtOrBefore,
  parseCron,
  wallClock,
} from '../../../src/notifiers/muting/cron.js';
import {
  compileMaintenance,
  inMaintenance,
  type MaintenanceWindow,
  nextOccurrence,
  openOccurrence,
} from '../../../src/notifiers/muting/maintenance.js';
import { fleetEvent, vpnBack, vpnLost } from '../routing/helpers.js';

function window(config: Record<string, unknown>): MaintenanceWindow {
  const [compiled] = compileMaintenance([maintenanceSchema.parse({ name: 'w', ...config })]);
  return compiled!;
}

const at = (iso: string) => Date.parse(iso);

/** Whether the window is open at each time. */
function openAt(w: MaintenanceWindow, times: string[]): Record<string, boolean> {
  return Object.fromEntries(times.map((time) => [time, openOccurrence(w, at(time)) !== undefined]));
}

describe('maintenance windows', () => {
  it('opens at each fire time for the duration, [start, start + duration)', () => {
    // 2025-03-01 is a Saturday.
    const w = window({ schedule: '0 22 * * sat', duration: '4h' });
    expect(
      openAt(w, [
        '2025-03-01T21:59:59Z',
        '2025-03-01T22:00:00Z',
        '2025-03-02T01:59:59Z',
        '2025-03-02T02:00:00Z',
        '2025-03-08T23:00:00Z',
        '2025-03-05T23:00:00Z',
      ]),
    ).toEqual({
      '2025-03-01T21:59:59Z': false,
      '2025-03-01T22:00:00Z': true,
      '2025-03-02T01:59:59Z': true,
      '2025-03-02T02:00:00Z': false,
      '2025-03-08T23:00:00Z': true,
      '2025-03-05T23:00:00Z': false,
    });
    expect(openOccurrence(w, at('2025-03-02T01:00:00Z'))).toEqual({
      startsAt: at('2025-03-01T22:00:00Z'),
      endsAt: at('2025-03-02T02:00:00Z'),
    });
  });

  it('mutes only matching events and names the window', () => {
    const windows = compileMaintenance([
      maintenanceSchema.parse({
        name: 'north-updates',
        schedule: '0 22 * * *',
        duration: '2h',
        match: { tags: { site: 'north' } },
      }),
      maintenanceSchema.parse({
        name: 'robot-night',
        schedule: '0 23 * * *',
        duration: '1h',
        match: { subject: 'robot/*' },
      }),
    ]);
    const now = at('2025-03-01T23:30:00Z');
    expect(inMaintenance(vpnLost('n1'), { site: 'north' }, windows, now)).toBe('north-updates');
    expect(inMaintenance(vpnBack('n1'), { site: 'north' }, windows, now)).toBe('north-updates');
    expect(inMaintenance(vpnLost('s1'), { site: 'south' }, windows, now)).toBeUndefined();
    expect(inMaintenance(fleetEvent('robot.health.down', 'robot/r1'), {}, windows, now)).toBe('robot-night');
    expect(
      inMaintenance(vpnLost('n1'), { site: 'north' }, windows, at('2025-03-02T00:00:00Z')),
    ).toBeUndefined();
    expect(inMaintenance(vpnLost('n1'), { site: 'north' }, [], now)).toBeUndefined();
  });

  it('follows the time zone', () => {
    // 09:00 in New York on 2025-03-03 (EST, UTC-5) is 14:00Z.
    const utc = window({ schedule: '0 9 * * *', duration: '1h' });
    const newYork = window({ schedule: '0 9 * * *', duration: '1h', time_zone: 'America/New_York' });
    const kolkata = window({ schedule: '0 9 * * *', duration: '1h', time_zone: 'Asia/Kolkata' });
    expect(openOccurrence(utc, at('2025-03-03T09:30:00Z'))).toBeDefined();
    expect(openOccurrence(newYork, at('2025-03-03T09:30:00Z'))).toBeUndefined();
    expect(openOccurrence(newYork, at('2025-03-03T14:30:00Z'))?.startsAt).toBe(at('2025-03-03T14:00:00Z'));
    // After New York's DST change (2025-03-09) the same wall time is 13:00Z.
    expect(openOccurrence(newYork, at('2025-03-10T13:30:00Z'))?.startsAt).toBe(at('2025-03-10T13:00:00Z'));
    // Half-hour offsets: 09:00 IST (UTC+5:30) is 03:30Z.
    expect(openOccurrence(kolkata, at('2025-03-03T03:45:00Z'))?.startsAt).toBe(at('2025-03-03T03:30:00Z'));
  });

  describe('Europe/Berlin across daylight saving changes', () => {
    const berlin = (schedule: string, duration: string) =>
      window({ schedule, duration, time_zone: 'Europe/Berlin' });

    it('measures duration in elapsed time across the spring-forward night', () => {
      // Sat 2025-03-29 22:00 CET = 21:00Z; four hours later it is 03:00 CEST = 01:00Z.
      const w = berlin('0 22 * * *', '4h');
      expect(openOccurrence(w, at('2025-03-29T22:00:00Z'))).toEqual({
        startsAt: at('2025-03-29T21:00:00Z'),
        endsAt: at('2025-03-30T01:00:00Z'),
      });
      // The next evening is CEST: 22:00 = 20:00Z.
      expect(openOccurrence(w, at('2025-03-30T20:00:00Z'))?.startsAt).toBe(at('2025-03-30T20:00:00Z'));
      expect(openOccurrence(w, at('2025-03-30T19:59:59Z'))).toBeUndefined();
    });

    it('opens a window whose start falls in the skipped hour when the clock jumps', () => {
      // 02:30 does not exist on 2025-03-30: the clock goes from 02:00 CET (01:00Z) to 03:00 CEST.
      const w = berlin('30 2 * * *', '1h');
      expect(
        openAt(w, [
          '2025-03-30T00:59:59Z',
          '2025-03-30T01:00:00Z',
          '2025-03-30T01:59:59Z',
          '2025-03-30T02:00:00Z',
        ]),
      ).toEqual({
        '2025-03-30T00:59:59Z': false,
        '2025-03-30T01:00:00Z': true,
        '2025-03-30T01:59:59Z': true,
        '2025-03-30T02:00:00Z': false,
      });
      // The days around it are plain: 02:30 CET = 01:30Z, 02:30 CEST = 00:30Z.
      expect(openOccurrence(w, at('2025-03-29T01:45:00Z'))?.startsAt).toBe(at('2025-03-29T01:30:00Z'));
      expect(openOccurrence(w, at('2025-03-31T00:45:00Z'))?.startsAt).toBe(at('2025-03-31T00:30:00Z'));
    });

    it('opens once when its start time happens twice in the fall-back night', () => {
      // 2025-10-26: 02:30 CEST (00:30Z), then at 03:00 CEST the clock goes back to 02:00 CET (01:00Z),
      // so 02:30 comes again at 01:30Z.
      const w = berlin('30 2 * * *', '1h');
      expect(
        openAt(w, [
          '2025-10-26T00:29:59Z',
          '2025-10-26T00:30:00Z',
          '2025-10-26T01:29:59Z',
          '2025-10-26T01:30:00Z',
          '2025-10-26T02:00:00Z',
        ]),
      ).toEqual({
        '2025-10-26T00:29:59Z': false,
        '2025-10-26T00:30:00Z': true,
        '2025-10-26T01:29:59Z': true,
        '2025-10-26T01:30:00Z': false,
        '2025-10-26T02:00:00Z': false,
      });
    });

    it('keeps an overnight window the right length when the clock goes back', () => {
      // Sat 2025-10-25 22:00 CEST = 20:00Z; 6 elapsed hours end at 02:00Z = 03:00 CET.
      const w = berlin('0 22 * * sat', '6h');
      expect(openOccurrence(w, at('2025-10-26T01:59:00Z'))).toEqual({
        startsAt: at('2025-10-25T20:00:00Z'),
        endsAt: at('2025-10-26T02:00:00Z'),
      });
    });
  });

  it('supports seconds, last day of month and weekday ranges', () => {
    const seconds = window({ schedule: '30 0 3 * * *', duration: '10s' });
    expect(openAt(seconds, ['2025-03-01T03:00:29Z', '2025-03-01T03:00:30Z', '2025-03-01T03:00:40Z'])).toEqual(
      {
        '2025-03-01T03:00:29Z': false,
        '2025-03-01T03:00:30Z': true,
        '2025-03-01T03:00:40Z': false,
      },
    );
    const lastDay = window({ schedule: '0 23 L * *', duration: '2h' });
    expect(openOccurrence(lastDay, at('2025-03-01T00:30:00Z'))?.startsAt).toBe(at('2025-02-28T23:00:00Z'));
    expect(openOccurrence(lastDay, at('2025-02-28T00:30:00Z'))).toBeUndefined();
    const weekdays = window({ schedule: '0 12 * * mon-fri', duration: '1h' });
    expect(openOccurrence(weekdays, at('2025-03-03T12:30:00Z'))).toBeDefined(); // Monday
    expect(openOccurrence(weekdays, at('2025-03-02T12:30:00Z'))).toBeUndefined(); // Sunday
    const secondTuesday = window({ schedule: '0 4 * * 2#2', duration: '2d' });
    expect(openOccurrence(secondTuesday, at('2025-03-12T12:00:00Z'))?.startsAt).toBe(
      at('2025-03-11T04:00:00Z'),
    );
  });
});

describe('cron helpers', () => {
  it('explains invalid expressions', () => {
    expect(cronProblem('0 22 * * sat')).toBeUndefined();
    expect(cronProblem('@daily')).toBeUndefined();
    expect(cronProblem('')).toMatch(/must be a cron expression/);
    expect(cronProblem('0 25 * * *')).toBe(
      '"0 25 * * *" is not a valid cron expression: "25" is not a valid hour field',
    );
    expect(() => parseCron('nope')).toThrow(/not a valid cron expression/);
  });

  it('maps wall-clock times to instants, the first instant the clock reads them', () => {
    const tz = 'Europe/Berlin';
    expect(instantOfWallClock(Date.UTC(2025, 5, 1, 12, 0), tz)).toBe(at('2025-06-01T10:00:00Z'));
    expect(instantOfWallClock(Date.UTC(2025, 2, 30, 2, 30), tz)).toBe(at('2025-03-30T01:00:00Z'));
    expect(instantOfWallClock(Date.UTC(2025, 9, 26, 2, 30), tz)).toBe(at('2025-10-26T00:30:00Z'));
    expect(wallClock(at('2025-10-26T01:30:00Z'), tz)).toBe(Date.UTC(2025, 9, 26, 2, 30));
  });

  it('finds nothing before notBefore', () => {
    const daily = parseCron('0 0 * * *');
    expect(
      latestFireAtOrBefore(daily, 'UTC', at('2025-03-01T12:00:00Z'), at('2025-03-01T01:00:00Z')),
    ).toBeUndefined();
    expect(latestFireAtOrBefore(daily, 'UTC', at('2025-03-01T12:00:00Z'), at('2025-03-01T00:00:00Z'))).toBe(
      at('2025-03-01T00:00:00Z'),
    );
    expect(latestFireAtOrBefore(daily, 'UTC', 0, 1)).toBeUndefined();
  });

  it('finds the next occurrence after now, never the one open now', () => {
    // 2025-03-05 is a Wednesday; the window opens Saturdays at 22:00 in Berlin (21:00Z in March).
    const w = window({ schedule: '0 22 * * sat', duration: '4h', time_zone: 'Europe/Berlin' });
    expect(nextOccurrence(w, at('2025-03-05T12:00:00Z'))).toEqual({
      startsAt: at('2025-03-08T21:00:00Z'),
      endsAt: at('2025-03-09T01:00:00Z'),
    });
    // At the fire time itself and while open, the next is a week later.
    expect(nextOccurrence(w, at('2025-03-08T21:00:00Z'))?.startsAt).toBe(at('2025-03-15T21:00:00Z'));
    expect(nextOccurrence(w, at('2025-03-08T23:00:00Z'))?.startsAt).toBe(at('2025-03-15T21:00:00Z'));
  });

  it('looks forward through daylight saving time: the gap fires at the jump, the repeated hour once', () => {
    const daily = parseCron('30 2 * * *');
    const tz = 'Europe/Berlin';
    expect(earliestFireAfter(daily, tz, at('2025-03-29T12:00:00Z'), at('2025-04-29T00:00:00Z'))).toBe(
      at('2025-03-30T01:00:00Z'),
    );
    // 02:30 CEST on 2025-10-26 is 00:30Z; the repeated 02:30 CET (01:30Z) does not fire again.
    expect(earliestFireAfter(daily, tz, at('2025-10-25T12:00:00Z'), at('2025-11-25T00:00:00Z'))).toBe(
      at('2025-10-26T00:30:00Z'),
    );
    expect(earliestFireAfter(daily, tz, at('2025-10-26T00:30:00Z'), at('2025-11-25T00:00:00Z'))).toBe(
      at('2025-10-27T01:30:00Z'),
    );
    const everySecond = parseCron('* * * * * *');
    expect(
      earliestFireAfter(everySecond, 'UTC', at('2025-03-01T23:59:59Z'), at('2025-03-03T00:00:00Z')),
    ).toBe(at('2025-03-02T00:00:00Z'));
  });

  it('has no next occurrence beyond its horizon or past notAfter', () => {
    // The 29th of February on a Monday: next in 2044.
    const w = window({ schedule: '0 0 29 2 mon', duration: '1h' });
    expect(nextOccurrence(w, at('2025-03-01T00:00:00Z'))).toBeUndefined();
    const daily = parseCron('0 0 * * *');
    expect(
      earliestFireAfter(daily, 'UTC', at('2025-03-01T01:00:00Z'), at('2025-03-01T23:00:00Z')),
    ).toBeUndefined();
  });
});
