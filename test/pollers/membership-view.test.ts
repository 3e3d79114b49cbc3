import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MembershipView, membershipRef, mergeMemberships } from '../../src/pollers/membership-view.js';
import { type SnapshotRef, SnapshotStore } from '../../src/store/snapshot-store.js';
import { deletePrefixKeys, suiteConnection, uniquePrefix } from '../support/redis.js';

let store: SnapshotStore;
const prefix = uniquePrefix();
const redis = suiteConnection(prefix);
const fullReads: SnapshotRef[][] = [];

/** A store that records which reads moved whole records (state included). */
class CountingStore extends SnapshotStore {
  override read(refs: readonly SnapshotRef[]) {
    fullReads.push([...refs]);
    return super.read(refs);
  }
}

beforeAll(() => {
  store = new CountingStore({ redis, prefix, installation: 'test' });
});

async function list(version: number, known: string[], missing: string[], at: string): Promise<void> {
  const result = await store.commit(
    membershipRef('vehicle'),
    version,
    { state: { known, missing: missing.map((id) => ({ id })) }, observedAt: at, lastSeenAt: at },
    [],
  );
  expect(result.committed).toBe(true);
}

describe('MembershipView', () => {
  it('knows no ids before any list was observed', async () => {
    const view = new MembershipView(store);
    const membership = await view.current('robot');
    expect(membership).toMatchObject({ version: 0, ids: [] });
    expect(membership.listedAt).toBeNaN();
  });

  it('decodes a list once per version, and again when it changes', async () => {
    const view = new MembershipView(store);
    await list(0, ['v-2', 'v-1', 'v-3'], ['v-3'], '2026-01-01T00:00:00.000Z');

    const first = await view.current('vehicle');
    expect(first.ids).toEqual(['v-1', 'v-2']);
    expect(first.has('v-2')).toBe(true);
    expect(first.has('v-3')).toBe(false);
    expect(first.listedAt).toBe(Date.parse('2026-01-01T00:00:00.000Z'));

    fullReads.length = 0;
    // A list that changed nothing only moves its times: no new version, no full read.
    await store.touch([
      {
        ref: membershipRef('vehicle'),
        polledAt: '2026-01-01T00:01:00.000Z',
        lastSeenAt: '2026-01-01T00:01:00.000Z',
      },
    ]);
    const again = await view.current('vehicle');
    expect(fullReads).toEqual([]);
    expect(again.ids).toBe(first.ids);
    expect(again.listedAt).toBe(Date.parse('2026-01-01T00:01:00.000Z'));

    await list(1, ['v-1', 'v-4'], [], '2026-01-01T00:02:00.000Z');
    const changed = await view.current('vehicle');
    expect(fullReads).toHaveLength(1);
    expect(changed).toMatchObject({ version: 2, ids: ['v-1', 'v-4'] });
    expect(changed.has('v-2')).toBe(false);
  });
});

describe('MembershipView over 4 shards', () => {
  const sharded = uniquePrefix('hs');
  let parts: SnapshotStore;

  beforeAll(() => {
    parts = new SnapshotStore({ redis, prefix: sharded, installation: 'test', shards: 4 });
  });

  afterAll(async () => {
    await deletePrefixKeys(redis, sharded);
  });

  it('reads the list as the union of its parts, listed as recently as its least recent part', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `v-${i}`);
    const shardOf = (id: string) => parts.keys.shardOf(`vehicle/${id}`);
    expect(new Set(ids.map(shardOf)).size).toBe(4);
    for (let shard = 0; shard < 4; shard++) {
      const mine = ids.filter((id) => shardOf(id) === shard);
      const at = `2026-01-01T00:0${shard}:00.000Z`;
      const result = await parts.commit(
        membershipRef('vehicle', shard),
        0,
        {
          state: { known: mine, missing: mine.includes('v-5') ? [{ id: 'v-5' }] : [] },
          observedAt: at,
          lastSeenAt: at,
        },
        [],
      );
      expect(result.committed).toBe(true);
      expect(parts.keyOf(membershipRef('vehicle', shard))).toBe(
        `${parts.keys.shardKeys(shard).tag}:snap:fleet:vehicle:membership`,
      );
    }
    const view = new MembershipView(parts);
    const membership = await view.current('vehicle');
    expect(membership.ids).toEqual(ids.filter((id) => id !== 'v-5').sort());
    expect(membership.version).toBe(4);
    expect(membership.listedAt).toBe(Date.parse('2026-01-01T00:00:00.000Z'));
    expect(mergeMemberships([undefined, undefined])).toEqual({ version: 0, state: undefined });
  });
});
