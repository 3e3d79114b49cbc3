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
  items.forEach((item, position) => {
    const shard = shardOf(item);
    let group = groups.get(shard);
    if (!group) {
      group = { shard, items: [], positions: [] };
      groups.set(shard, group);
    }
    group.items.push(item);
    group.positions.push(position);
  });
  return [...groups.values()];
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
  const groups = isCluster(redis)
    ? byShard(items, shardOf)
    : [{ shard: 0, items: [...items], positions: items.map((_, i) => i) }];
  const out: PipelineReply[][] = new Array(items.length);
  await Promise.all(
    groups.map(async (group) => {
      const pipeline = redis.pipeline();
      const spans = group.items.map((item) => {
        const from = pipeline.length;
        queue(pipeline, item);
        return [from, pipeline.length] as const;
      });
      const replies = ((await pipeline.exec()) ?? []) as PipelineReply[];
      spans.forEach(([from, to], i) => {
        out[group.positions[i] as number] = Array.from(
          { length: to - from },
          (_, k) => replies[from + k] ?? MISSING,
        );
      });
    }),
  );
  return out;
}
