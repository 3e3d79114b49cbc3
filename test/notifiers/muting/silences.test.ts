import { describe, expect, it } from 'vitest';
import {
  activeSilences,
  createSilence,
  expireSilence,
  isSilenced,
  type Silence,
  silencedBy,
  silenceState,
} from '../../../src/notifiers/muting/silences.js';
import { fleetEvent, HOUR, MINUTE, T0, vpnBack, vpnLost } from '../routing/helpers.js';

function silence(overrides: Partial<Silence> = {}): Silence {
  return {
    id: 's-1',
    matchers: { type: 'vehicle.vpn.disconnected', subject: 'vehicle/veh-00*' },
    startsAt: new Date(T0).toISOString(),
    endsAt: new Date(T0 + HOUR).toISOString(),
    createdBy: 'alice',
    comment: 'OPS-123 router swap',
    ...overrides,
  };
}

describe('silences', () => {
  it('is pending, active in [startsAt, endsAt), then expired', () => {
    const s = silence();
    expect(silenceState(s, T0 - 1)).toBe('pending');
    expect(silenceState(s, T0)).toBe('active');
    expect(silenceState(s, T0 + HOUR - 1)).toBe('active');
    expect(silenceState(s, T0 + HOUR)).toBe('expired');
    expect(
      activeSilences(
        [
          s,
          silence({
            id: 's-2',
            startsAt: new Date(T0 + HOUR).toISOString(),
            endsAt: new Date(T0 + 2 * HOUR).toISOString(),
          }),
        ],
        T0 + MINUTE,
      ).map((x) => x.id),
    ).toEqual(['s-1']);
  });

  it('mutes matching events while active only', () => {
    const silences = [silence()];
    expect(isSilenced(vpnLost('veh-001'), {}, silences, T0 + MINUTE)).toBe(true);
    expect(isSilenced(vpnLost('veh-001'), {}, silences, T0 - 1)).toBe(false);
    expect(isSilenced(vpnLost('veh-001'), {}, silences, T0 + HOUR)).toBe(false);
    expect(isSilenced(vpnLost('veh-101'), {}, silences, T0 + MINUTE)).toBe(false);
    expect(isSilenced(fleetEvent('vehicle.ip.changed', 'vehicle/veh-001'), {}, silences, T0 + MINUTE)).toBe(
      false,
    );
  });

  it('also mutes the resolution of a silenced incident', () => {
    expect(isSilenced(vpnBack('veh-001'), {}, [silence()], T0 + MINUTE)).toBe(true);
  });

  it('matches severity minimums and tags, and says which silence', () => {
    const silences = [
      silence({ id: 'crit', matchers: { severity: 'critical' } }),
      silence({ id: 'north', matchers: { tags: { site: 'north' } } }),
    ];
    expect(silencedBy(fleetEvent('robot.health.down', 'robot/r1'), {}, silences, T0)?.id).toBe('crit');
    expect(silencedBy(vpnLost('x'), { site: 'north' }, silences, T0)?.id).toBe('north');
    expect(silencedBy(vpnLost('x'), { site: 'south' }, silences, T0)).toBeUndefined();
  });

  it('expires now', () => {
    const expired = expireSilence(silence(), T0 + MINUTE);
    expect(expired.endsAt).toBe(new Date(T0 + MINUTE).toISOString());
    expect(silenceState(expired, T0 + MINUTE)).toBe('expired');
    const pending = silence({
      startsAt: new Date(T0 + HOUR).toISOString(),
      endsAt: new Date(T0 + 2 * HOUR).toISOString(),
    });
    expect(silenceState(expireSilence(pending, T0), T0 + HOUR)).toBe('expired');
    // Expired at once, not listed as pending until its start (and expiring it again is a no-op).
    expect(silenceState(expireSilence(pending, T0), T0)).toBe('expired');
    expect(expireSilence(expireSilence(pending, T0), T0 + MINUTE)).toEqual(expireSilence(pending, T0));
    const old = silence({ endsAt: new Date(T0 + 1).toISOString() });
    expect(expireSilence(old, T0 + HOUR)).toBe(old);
  });
});

describe('creating silences', () => {
  const base = { matchers: { subject: 'vehicle/veh-001' }, createdBy: 'alice', comment: 'OPS-123' };

  it('starts now and lasts the duration', () => {
    expect(createSilence({ ...base, duration: '2h' }, T0, 's-9')).toEqual({
      ok: true,
      silence: {
        id: 's-9',
        matchers: { subject: 'vehicle/veh-001' },
        startsAt: new Date(T0).toISOString(),
        endsAt: new Date(T0 + 2 * HOUR).toISOString(),
        createdBy: 'alice',
        comment: 'OPS-123',
      },
    });
  });

  it('takes an explicit window', () => {
    const result = createSilence(
      { ...base, startsAt: '2025-03-01T13:00:00Z', endsAt: '2025-03-01T15:00:00+01:00' },
      T0,
      's-10',
    );
    expect(result.ok && [result.silence.startsAt, result.silence.endsAt]).toEqual([
      '2025-03-01T13:00:00.000Z',
      '2025-03-01T14:00:00.000Z',
    ]);
  });

  it('says what is wrong, field by field', () => {
    const problems = (input: unknown) => {
      const result = createSilence(input, T0, 'id');
      return result.ok ? [] : result.problems;
    };
    expect(problems({ matchers: {}, duration: '1h' })).toEqual([
      'matchers: must have at least one of type, severity, subject, tags (an empty silence would mute everything)',
      'createdBy: is required: say who creates the silence',
      'comment: is required: say why (a ticket, the work going on)',
    ]);
    expect(problems({ ...base, createdBy: '  ', comment: '', duration: '1h' })).toEqual([
      'createdBy: must say who creates the silence',
      'comment: must say why (a ticket, the work going on)',
    ]);
    expect(
      problems({ ...base, matchers: { severity: 'major', type: 'vehicle.nope' }, duration: '1h' }),
    ).toEqual([
      'matchers.type: "vehicle.nope" matches no event type (for example vehicle.vpn.disconnected, robot.health.*)',
      'matchers.severity: must be one of info, warning, critical (a minimum: warning matches warning and critical), got "major"',
    ]);
    expect(problems(base)).toEqual(['endsAt: give endsAt or duration']);
    expect(problems({ ...base, endsAt: '2025-03-01T13:00:00Z', duration: '1h' })).toEqual([
      'duration: give endsAt or duration, not both',
    ]);
    expect(problems({ ...base, startsAt: '2025-03-01T13:00:00Z', endsAt: '2025-03-01T12:30:00Z' })).toEqual([
      'endsAt: must be after startsAt',
    ]);
    expect(problems({ ...base, endsAt: 'tomorrow' })).toEqual([
      'endsAt: must be an ISO 8601 time such as 2025-03-01T22:00:00Z',
    ]);
    expect(problems({ ...base, endsAt: '2025-03-01T11:00:00Z' })).toEqual([
      'endsAt: is in the past; the silence would never be active',
    ]);
    expect(problems({ ...base, duration: '-1h' })).toEqual([
      'duration: expected a duration between 1s and 365d, like 30s; got -1h',
    ]);
    expect(problems({ ...base, duration: '1h', matchers: { subject: 'vehicle/[x' } })).toEqual([
      'matchers.subject: is not a valid glob: has an unclosed "[" at position 9 in "vehicle/[x"',
    ]);
  });
});
