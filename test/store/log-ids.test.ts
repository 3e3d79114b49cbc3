import { describe, expect, it } from 'vitest';
import {
  compareLogIds,
  endBefore,
  fromLogId,
  readAfter,
  startAfter,
  toLogId,
} from '../../src/store/log-ids.js';

/** Whether shard stream id `id` lies after the XRANGE start bound `bound` (`(x` exclusive, `x` inclusive). */
function afterStart(id: string, bound: string): boolean {
  return bound.startsWith('(') ? compareLogIds(id, bound.slice(1)) > 0 : compareLogIds(id, bound) >= 0;
}

describe('merged event log ids', () => {
  it('are the stream ids themselves with one shard', () => {
    expect(toLogId('1700000000000-3', 0, 1)).toBe('1700000000000-3');
    expect(startAfter('5-1', 0, 1)).toBe('(5-1');
    expect(endBefore('5-1', 0, 1)).toBe('(5-1');
    expect(readAfter('5-1', 0, 1)).toBe('5-1');
  });

  it('are unique, time ordered and name their shard', () => {
    expect(toLogId('1700000000000-3', 2, 4)).toBe('1700000000000-14');
    expect(fromLogId('1700000000000-14', 4)).toEqual({ shard: 2, streamId: '1700000000000-3' });
    expect(compareLogIds(toLogId('7-0', 3, 4), toLogId('7-1', 0, 4))).toBeLessThan(0);
    expect(compareLogIds(toLogId('7-9', 3, 4), toLogId('8-0', 0, 4))).toBeLessThan(0);
  });

  it("turn a merged position into each shard's bounds, exactly", () => {
    const shards = 4;
    // Every entry of every shard in milliseconds 6 to 8, seq 0 to 5.
    const entries = [6, 7, 8].flatMap((ms) =>
      Array.from({ length: shards }, (_, shard) =>
        Array.from({ length: 6 }, (_, seq) => ({
          shard,
          own: `${ms}-${seq}`,
          merged: toLogId(`${ms}-${seq}`, shard, shards),
        })),
      ).flat(),
    );
    for (const position of entries) {
      for (let shard = 0; shard < shards; shard++) {
        const mine = entries.filter((entry) => entry.shard === shard);
        const after = mine
          .filter((entry) => compareLogIds(entry.merged, position.merged) > 0)
          .map((e) => e.own);
        const before = mine
          .filter((entry) => compareLogIds(entry.merged, position.merged) < 0)
          .map((e) => e.own);
        expect(
          mine
            .filter((entry) => afterStart(entry.own, startAfter(position.merged, shard, shards)))
            .map((e) => e.own),
        ).toEqual(after);
        expect(
          mine
            .filter((entry) => compareLogIds(entry.own, readAfter(position.merged, shard, shards)) > 0)
            .map((e) => e.own),
        ).toEqual(after);
        const end = endBefore(position.merged, shard, shards);
        expect(mine.filter((entry) => compareLogIds(entry.own, end.slice(1)) < 0).map((e) => e.own)).toEqual(
          before,
        );
      }
    }
  });
});
