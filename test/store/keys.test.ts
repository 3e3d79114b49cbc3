import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bullPrefix, decodeSegment, encodeSegment, storeKeys } from '../../src/store/keys.js';
import { keySlot, shardTags } from '../../src/store/shards.js';

/** Redis Cluster hashes only what is between the first `{` and the next `}`. */
function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : undefined;
}

describe('encodeSegment', () => {
  it('encodes as encodeURIComponent does, plain ids included', () => {
    const plain = fc.stringMatching(/^[A-Za-z0-9_.!~*'()-]+$/);
    fc.assert(
      fc.property(
        fc.oneof(plain, fc.string({ minLength: 1 }), fc.string({ minLength: 1, unit: 'grapheme' })),
        (value) => {
          expect(encodeSegment(value)).toBe(encodeURIComponent(value));
          expect(decodeSegment(encodeSegment(value))).toBe(value);
        },
      ),
      { numRuns: 1_000 },
    );
    expect(encodeSegment('robot-00042')).toBe('robot-00042');
    expect(encodeSegment('a b:{c}')).toBe('a%20b%3A%7Bc%7D');
    expect(() => encodeSegment('')).toThrow(TypeError);
  });
});

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

describe('key layout over shards', () => {
  const one = storeKeys('fw');
  const four = storeKeys('fw', 4);

  it('keeps every key of one shard under `{p}`, as without shards', () => {
    expect(one.shards).toBe(1);
    expect(one.allShards.map((shard) => shard.tag)).toEqual(['{fw}']);
    expect(one.shardKeys(0).outbox).toBe('{fw}:outbox');
    expect(one.shardKeys(0).order('vehicle/V-1')).toBe('{fw}:order:vehicle%2FV-1');
    expect(one.shardKeys(0).incidentsOpen).toBe('{fw}:incidents:open');
    expect(one.controlMarker).toBe(one.storeMarker);
    expect(one.shardOf('vehicle/V-1')).toBe(0);
  });

  it("puts an entity's snapshots and leases in its subject's shard, and all of a shard in one slot", () => {
    expect(four.allShards.map((shard) => shard.tag)).toEqual(shardTags('fw', 4));
    for (const id of ['V-1', 'V-2', 'V-3', 'V-4', 'V-5', 'V-6']) {
      const shard = four.shardKeys(four.shardOf(`vehicle/${id}`));
      const keys = [
        four.snapshot('vehicle', id, 'link'),
        four.snapshot('vehicle', id, 'power'),
        four.pollLease('vehicle', id, 'vehicle-power'),
        shard.outbox,
        shard.events,
        shard.index('vehicle'),
        shard.storeMarker,
        shard.incident('vpn-V-1-00000000'),
        shard.incidentsOpen,
        shard.order(`vehicle/${id}`),
      ];
      expect(new Set(keys.map(keySlot))).toEqual(new Set([keySlot(shard.tag)]));
    }
  });

  it('spreads subjects over every shard and keeps the rest under `{p}`', () => {
    const used = new Set(Array.from({ length: 200 }, (_, i) => four.shardOf(`vehicle/veh-${i}`)));
    expect(used).toEqual(new Set([0, 1, 2, 3]));
    expect(four.subjectOf('fleet', 'upstream', 'fleet')).toBe('upstream/fleet');
    expect(four.subjectOf('robot', 'R-1', 'health')).toBe('robot/R-1');
    expect(hashTagOf(four.snapshot('fleet', 'upstream', 'fleet'))).toBe(
      hashTagOf(four.shardKeys(four.shardOf('upstream/fleet')).tag),
    );
    for (const key of [
      four.controlMarker,
      four.healthCheck,
      four.session('ab'),
      four.upstreamWindow('fleet', 3),
    ]) {
      expect(hashTagOf(key)).toBe('fw');
    }
    expect(four.controlMarker).not.toBe(four.shardKeys(0).storeMarker);
  });

  it('refuses shard counts and shard numbers out of range', () => {
    expect(() => storeKeys('fw', 0)).toThrow(/shard count from 1 to 256/);
    expect(() => storeKeys('fw', 1.5)).toThrow(/shard count/);
    expect(() => four.shardKeys(4)).toThrow(/no shard 4: expected 0 to 3/);
  });
});
