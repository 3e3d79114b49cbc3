import { describe, expect, it } from 'vitest';
import {
  CLUSTER_SLOTS,
  crc16,
  keySlot,
  MAX_SHARDS,
  shardTags,
  subjectShard,
} from '../../src/store/shards.js';

/** Slots `CLUSTER KEYSLOT` of a real Redis 7 cluster node answered for these keys. */
const REDIS_ANSWERS: ReadonlyArray<readonly [string, number]> = [
  ['123456789', 12739],
  ['fw', 12284],
  ['{fw}:snap:vehicle:veh-0001:link', 12284],
  ['fw.0-0', 16115],
  ['héllo', 11061],
  ['{}x', 10595],
  ['a{b}c', 3300],
  ['foo{}{bar}', 8363],
  ['hc-x.3-17', 7323],
];

describe('key slots', () => {
  it('computes CRC16-XMODEM as Redis does', () => {
    // The check value of CRC16-XMODEM, also Redis Cluster's documented example.
    expect(crc16('123456789')).toBe(0x31c3);
  });

  it.each(REDIS_ANSWERS)('puts %s in slot %i, as CLUSTER KEYSLOT does', (key, slot) => {
    expect(keySlot(key)).toBe(slot);
  });
});

describe('shard tags', () => {
  it('is the installation tag itself with one shard', () => {
    expect(shardTags('fw', 1)).toEqual(['{fw}']);
  });

  it.each([2, 3, 4, 6, 12, 64, MAX_SHARDS])(
    'puts each of %i shards in the middle of its own slot range',
    (n) => {
      const tags = shardTags('fw', n);
      expect(new Set(tags).size).toBe(n);
      tags.forEach((tag, shard) => {
        expect(tag).toMatch(new RegExp(`^\\{fw\\.${shard}-\\d+\\}$`));
        const slot = keySlot(`${tag}:snap`);
        const width = CLUSTER_SLOTS / n;
        expect(slot).toBeGreaterThanOrEqual(shard * width + width / 4);
        expect(slot).toBeLessThan(shard * width + (3 * width) / 4);
      });
    },
  );

  it('gives each of 3 masters (redis-cli --cluster create ranges) a third of 6 or 12 shards', () => {
    const masterOf = (slot: number) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2);
    for (const n of [6, 12]) {
      const perMaster = [0, 0, 0];
      for (const tag of shardTags('hc-any', n)) {
        const master = masterOf(keySlot(tag));
        perMaster[master] = (perMaster[master] ?? 0) + 1;
      }
      expect(perMaster).toEqual([n / 3, n / 3, n / 3]);
    }
  });

  it('is the same for the same prefix and count, and different for another prefix', () => {
    expect(shardTags('fw', 6)).toEqual(shardTags('fw', 6));
    expect(shardTags('fw', 6)).not.toEqual(shardTags('fw2', 6).map((tag) => tag.replace('fw2', 'fw')));
  });

  it('refuses a count outside 1 … 256', () => {
    for (const n of [0, -1, 1.5, MAX_SHARDS + 1]) expect(() => shardTags('fw', n)).toThrow(/from 1 to 256/);
  });
});

describe('subject shard', () => {
  it('is stable and spreads subjects over every shard', () => {
    const counts = new Array(6).fill(0) as number[];
    for (let i = 1; i <= 600; i++) {
      const shard = subjectShard(`vehicle/veh-${String(i).padStart(4, '0')}`, 6);
      expect(subjectShard(`vehicle/veh-${String(i).padStart(4, '0')}`, 6)).toBe(shard);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    // 100 each on average; a fair hash keeps every shard well within half of that.
    for (const count of counts) expect(count).toBeGreaterThan(50);
    expect(subjectShard('vehicle/veh-0001', 1)).toBe(0);
  });
});
