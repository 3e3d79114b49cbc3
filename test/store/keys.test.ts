import { describe, expect, it } from 'vitest';
import { bullPrefix, decodeSegment, storeKeys } from '../../src/store/keys.js';

/** Redis Cluster hashes only what is between the first `{` and the next `}`. */
function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : undefined;
}

describe('key layout', () => {
  const keys = storeKeys('fw');

  it('puts everything under one hash tag', () => {
    const all = [
      keys.snapshot('vehicle', 'V-1', 'power'),
      keys.membership('robot'),
      keys.outbox,
      keys.outboxRejected,
      keys.events,
      keys.pollLease('robot', 'R-1', 'health'),
      keys.index('vehicle'),
      `${bullPrefix('fw')}:events:wait`,
    ];
    for (const key of all) expect(hashTagOf(key)).toBe('fw');
  });

  it('matches the documented layout', () => {
    expect(keys.snapshot('vehicle', 'V-1', 'power')).toBe('{fw}:snap:vehicle:V-1:power');
    expect(keys.membership('vehicle')).toBe('{fw}:snap:fleet:vehicle:membership');
    expect(keys.outbox).toBe('{fw}:outbox');
    expect(keys.events).toBe('{fw}:events');
    expect(keys.pollLease('vehicle', 'V-1', 'power')).toBe('{fw}:lease:poll:vehicle:V-1:power');
    expect(keys.index('robot')).toBe('{fw}:index:robot');
    expect(bullPrefix('fw')).toBe('{fw}');
  });

  it('encodes ids so braces cannot move the hash tag and colons cannot collide', () => {
    const braces = keys.snapshot('vehicle', '}{evil}', 'power');
    expect(hashTagOf(braces)).toBe('fw');
    expect(braces).not.toMatch(/\{evil/);
    expect(keys.snapshot('vehicle', 'a:b', 'c')).not.toBe(keys.snapshot('vehicle', 'a', 'b:c'));
    const segment = keys.snapshot('robot', 'dev:1/2 3', 'lease').split(':')[3]!;
    expect(decodeSegment(segment)).toBe('dev:1/2 3');
  });

  it('rejects prefixes and ids that would break the layout', () => {
    expect(() => storeKeys('a}b')).toThrow(/prefix/);
    expect(() => storeKeys('a:b')).toThrow(/prefix/);
    expect(() => keys.snapshot('vehicle', '', 'power')).toThrow(/empty/);
  });
});
