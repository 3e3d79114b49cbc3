import { compareLogIds } from './log-ids.js';

/**
 * A live tail over N shards' event logs, passed on in merged-id order (log-ids.ts), so that a
 * client resuming after the last id it got (SSE `Last-Event-ID`) misses nothing another shard
 * logged before it.
 *
 * Each shard's stream is read on its own connection, so an entry can reach the tail after another
 * shard's later one. The tail holds each entry back until no shard can still bring an earlier one:
 * at once when every other shard has already given a later entry (a stream only grows, so nothing
 * earlier can follow there), else once it has been held `holdMs` while every shard's reader is
 * reading. A reader that is reconnecting holds everything, for at most `maxHoldMs`. What the bound
 * leaves open: an entry that reaches the tail more than `holdMs` after another shard's
 * later-stamped one (masters whose clocks are further apart, a reader stalled that long). Such an
 * entry is still passed on, out of order.
 */

/** One entry read from a shard: its merged id, and its value unless the tail's filter left it out. */
export interface ShardEntry<T> {
  id: string;
  value: T | undefined;
}

export interface MergeSource<T> {
  entries: AsyncIterator<ShardEntry<T>>;
  /** The shard's reader cannot read right now (reconnecting, or its last read failed). */
  behind(): boolean;
}

export interface MergeOptions {
  /** How long an entry waits for earlier ones of other shards; default 1 s. */
  holdMs?: number;
  /** How long a reader that is behind can hold entries back; default 30 s. */
  maxHoldMs?: number;
  now?: () => number;
}

export const DEFAULT_HOLD_MS = 1_000;
export const DEFAULT_MAX_HOLD_MS = 30_000;

interface Held<T> {
  id: string;
  shard: number;
  value: T;
  at: number;
}

type Step<T> = { shard: number; result: IteratorResult<ShardEntry<T>> } | 'timer';

export async function* mergeByLogId<T>(
  sources: ReadonlyArray<MergeSource<T>>,
  options: MergeOptions = {},
): AsyncGenerator<T, void, undefined> {
  const holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
  const maxHoldMs = Math.max(holdMs, options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS);
  const now = options.now ?? Date.now;
  // The last id read from each shard (filtered-out entries included).
  const marks: Array<string | undefined> = sources.map(() => undefined);
  // Sorted by id.
  const held: Held<T>[] = [];
  const next = (shard: number): Promise<Step<T>> =>
    (sources[shard] as MergeSource<T>).entries.next().then((result) => ({ shard, result }));
  const pending = new Map(sources.map((_, shard) => [shard, next(shard)] as const));

  const laterEverywhere = (head: Held<T>): boolean =>
    marks.every(
      (mark, shard) => shard === head.shard || (mark !== undefined && compareLogIds(mark, head.id) > 0),
    );
  const anyBehind = (): boolean => sources.some((source) => source.behind());
  const releasable = (head: Held<T>): boolean => {
    if (laterEverywhere(head)) return true;
    const waited = now() - head.at;
    return waited >= maxHoldMs || (waited >= holdMs && !anyBehind());
  };

  for (;;) {
    while (held.length > 0 && (pending.size === 0 || releasable(held[0] as Held<T>))) {
      yield (held.shift() as Held<T>).value;
    }
    if (pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const racers: Array<Promise<Step<T>>> = [...pending.values()];
    const head = held[0];
    if (head) {
      // While a reader is behind, look again every `holdMs` until `maxHoldMs`.
      const due = anyBehind() ? Math.min(head.at + maxHoldMs, now() + holdMs) : head.at + holdMs;
      racers.push(
        new Promise<'timer'>((resolve) => {
          timer = setTimeout(() => resolve('timer'), Math.max(1, due - now()));
        }),
      );
    }
    let step: Step<T>;
    try {
      step = await Promise.race(racers);
    } finally {
      clearTimeout(timer);
    }
    if (step === 'timer') continue;
    const { shard, result } = step;
    if (result.done) {
      pending.delete(shard);
      continue;
    }
    pending.set(shard, next(shard));
    const { id, value } = result.value;
    marks[shard] = id;
    if (value === undefined) continue;
    let at = held.length;
    while (at > 0 && compareLogIds((held[at - 1] as Held<T>).id, id) > 0) at -= 1;
    held.splice(at, 0, { id, shard, value, at: now() });
  }
}
