import type { ChainableCommander } from 'ioredis';
import { isCluster, type RedisClient } from '../lib/redis-connection.js';

/**
 * Batches over shards. A Lua call must touch keys of one slot, and on a Redis Cluster ioredis
 * sends a pipeline only when all its keys are in one slot: a batch of many entities is split per
 * shard. On a single Redis the groups still go in one pipeline, so a batch stays one round trip.
 */

/** The items of one shard, and where each stood in the whole batch. */
export interface ShardGroup<T> {
  shard: number;
  items: T[];
  positions: number[];
}

/** Groups `items` by shard, in order of first appearance; each group keeps its items' order. */
export function byShard<T>(items: readonly T[], shardOf: (item: T) => number): ShardGroup<T>[] {
  const groups = new Map<number, ShardGroup<T>>();
  for (let position = 0; position < items.length; position += 1) {
    const item = items[position] as T;
    const shard = shardOf(item);
    let group = groups.get(shard);
    if (!group) {
      group = { shard, items: [], positions: [] };
      groups.set(shard, group);
    }
    group.items.push(item);
    group.positions.push(position);
  }
  return [...groups.values()];
}

/**
 * The Redis key of each item, in order: a loop over a `keyOf` made once by the caller, not a
 * callback made per batch (ARCHITECTURE.md, *Hot paths*).
 */
export function keysOf<T>(items: readonly T[], keyOf: (item: T) => string): string[] {
  const keys = new Array<string>(items.length);
  for (let i = 0; i < items.length; i += 1) keys[i] = keyOf(items[i] as T);
  return keys;
}

/** Every item in one group (a single Redis), in order. */
function oneGroup<T>(items: readonly T[]): ShardGroup<T> {
  const positions = new Array<number>(items.length);
  for (let i = 0; i < items.length; i += 1) positions[i] = i;
  return { shard: 0, items: [...items], positions };
}

export type PipelineReply = [error: Error | null, result: unknown];

const MISSING: PipelineReply = [new Error('missing pipeline reply'), null];

/**
 * Queues each item's commands (`queue` may queue several) on a pipeline of its shard and runs the
 * pipelines: one on a single Redis, one per shard (in parallel) on a Cluster. Resolves with each
 * item's replies, in `items` order.
 */
export async function pipelineByShard<T>(
  redis: RedisClient,
  items: readonly T[],
  shardOf: (item: T) => number,
  queue: (pipeline: ChainableCommander, item: T) => void,
): Promise<PipelineReply[][]> {
  const groups = isCluster(redis) ? byShard(items, shardOf) : [oneGroup(items)];
  const out: PipelineReply[][] = new Array(items.length);
  await Promise.all(groups.map((group) => runGroup(redis, group, queue, out)));
  return out;
}

/**
 * One group's pipeline; each item's replies go to `out` at its position. Loops, not per-item
 * callbacks: a callback made anew on every call is optimized anew on every call once a full
 * collection has dropped the last one's code (ARCHITECTURE.md, *Hot paths*).
 */
async function runGroup<T>(
  redis: RedisClient,
  group: ShardGroup<T>,
  queue: (pipeline: ChainableCommander, item: T) => void,
  out: PipelineReply[][],
): Promise<void> {
  const pipeline = redis.pipeline();
  const spans = new Array<number>(group.items.length + 1);
  for (let i = 0; i < group.items.length; i += 1) {
    spans[i] = pipeline.length;
    queue(pipeline, group.items[i] as T);
  }
  spans[group.items.length] = pipeline.length;
  const replies = ((await pipeline.exec()) ?? []) as PipelineReply[];
  for (let i = 0; i < group.items.length; i += 1) {
    const from = spans[i] as number;
    const to = spans[i + 1] as number;
    const mine = new Array<PipelineReply>(to - from);
    for (let k = from; k < to; k += 1) mine[k - from] = replies[k] ?? MISSING;
    out[group.positions[i] as number] = mine;
  }
}
