import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { robotLeaseDetector } from '../../src/events/detectors/robot-lease.js';
import { Script } from './helpers.js';

const lease = () => new Script(robotLeaseDetector, undefined);

describe('robot lease', () => {
  it('is silent on the baseline and on renewals', () => {
    const script = lease();
    script.ok(0, { holderId: 'alice', expiresAt: '2025-03-01T12:05:00Z' });
    script.ok(10, { holderId: 'alice', expiresAt: '2025-03-01T12:10:00Z' });
    expect(script.all).toEqual([]);
  });

  it('reports a holder appearing, changing and going, once each', () => {
    const script = lease();
    script.ok(0, {});
    expect(script.ok(10, { holderId: 'alice', expiresAt: '2025-03-01T12:05:00Z' })).toEqual([
      {
        type: EVENT.robotLeaseChanged,
        data: { severity: 'info', previous: null, current: 'alice', expiresAt: '2025-03-01T12:05:00Z' },
      },
    ]);
    expect(script.ok(20, { holderId: 'bob' })).toEqual([
      {
        type: EVENT.robotLeaseChanged,
        data: { severity: 'info', previous: 'alice', current: 'bob', expiresAt: null },
      },
    ]);
    expect(script.ok(30, { expiresAt: '2025-03-01T12:05:00Z' })).toEqual([
      {
        type: EVENT.robotLeaseChanged,
        data: { severity: 'info', previous: 'bob', current: null, expiresAt: null },
      },
    ]);
    script.ok(40, {});
    expect(script.count(EVENT.robotLeaseChanged)).toBe(3);
  });

  it('ignores failures and unusable values', () => {
    const script = lease();
    script.ok(0, { holderId: 'alice' });
    script.fail(10, 'timeout');
    script.ok(20, null as never);
    script.ok(30, { holderId: 42 } as never);
    script.ok(40, { holderId: 'alice' });
    expect(script.all).toEqual([]);
  });
});
