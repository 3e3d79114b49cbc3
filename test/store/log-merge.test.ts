import { describe, expect, it } from 'vitest';
import { type MergeSource, mergeByLogId, type ShardEntry } from '../../src/store/log-merge.js';

/** A shard whose entries the test pushes; `behind` as the test sets it. */
class FakeShard implements MergeSource<string> {
  lagging = false;
  readonly #queue: Array<IteratorResult<ShardEntry<string>>> = [];
  readonly #waiting: Array<(result: IteratorResult<ShardEntry<string>>) => void> = [];

  readonly entries: AsyncIterator<ShardEntry<string>> = {
    next: () => {
      const queued = this.#queue.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve) => this.#waiting.push(resolve));
    },
  };

  behind(): boolean {
    return this.lagging;
  }

  push(id: string, value?: string): void {
    this.#deliver({ done: false, value: { id, value } });
  }

  end(): void {
    this.#deliver({ done: true, value: undefined });
  }

  #deliver(result: IteratorResult<ShardEntry<string>>): void {
    const waiter = this.#waiting.shift();
    if (waiter) waiter(result);
    else this.#queue.push(result);
  }
}

/** Collects what the merge passes on, as it passes it on. */
function collect(merge: AsyncGenerator<string>): { seen: string[]; done: Promise<void> } {
  const seen: string[] = [];
  const done = (async () => {
    for await (const value of merge) seen.push(value);
  })();
  return { seen, done };
}

describe('mergeByLogId', () => {
  it('passes an entry on at once when every other shard has given a later one, in id order', async () => {
    const [a, b] = [new FakeShard(), new FakeShard()];
    const { seen, done } = collect(mergeByLogId([a, b], { holdMs: 60_000 }));
    b.push('1000-3', 'b1'); // shard 1, later
    a.push('1000-0', 'a1'); // shard 0, earlier: arrives after b1
    await expect.poll(() => seen).toEqual(['a1']);
    // b1 waits for shard 0 to pass it (or for the hold): a later entry there releases it.
    a.push('1001-0', undefined); // filtered out, but it moves shard 0 on
    await expect.poll(() => seen).toEqual(['a1', 'b1']);
    a.end();
    b.end();
    await done;
  });

  it('releases after holdMs when another shard stays quiet, and flushes in order when every shard ends', async () => {
    const [a, b] = [new FakeShard(), new FakeShard()];
    const { seen, done } = collect(mergeByLogId([a, b], { holdMs: 50 }));
    a.push('2000-0', 'a1');
    await expect.poll(() => seen, { timeout: 2_000 }).toEqual(['a1']);
    b.push('3000-1', 'b1');
    a.push('2500-0', 'a2');
    b.end();
    a.end();
    await done;
    expect(seen).toEqual(['a1', 'a2', 'b1']);
  });

  it('holds entries while a reader is behind, up to maxHoldMs', async () => {
    const [a, b] = [new FakeShard(), new FakeShard()];
    b.lagging = true;
    const started = Date.now();
    const { seen, done } = collect(mergeByLogId([a, b], { holdMs: 20, maxHoldMs: 300 }));
    a.push('4000-0', 'a1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen).toEqual([]);
    await expect.poll(() => seen, { timeout: 2_000 }).toEqual(['a1']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    b.lagging = false;
    a.push('4001-0', 'a2');
    await expect.poll(() => seen, { timeout: 2_000 }).toEqual(['a1', 'a2']);
    a.end();
    b.end();
    await done;
  });
});
