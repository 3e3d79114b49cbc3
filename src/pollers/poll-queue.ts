import type { Queue } from 'bullmq';
import { POLL_JOB_OPTIONS, pollQueueName } from '../queues/names.js';
import { createQueue, type QueueOptions } from '../queues/queue.js';
import type { PollerName } from './config.js';
import { POLL_LANES, type PollLane } from './poller.js';

/** Job name = poller, data = the shard, job id = `poll-<poller>-<tick>-<shard>of<shards>`. */
export type PollQueue = Queue<PollJobData, unknown, string>;

/** Every lane's poll queue (see `POLL_LANES`). */
export type PollQueues = Readonly<Record<PollLane, PollQueue>>;

/** The names of the poll queues, one per lane: `poll-fleet`, `poll-robots`. */
export const POLL_QUEUE_NAMES: readonly string[] = POLL_LANES.map((lane) => pollQueueName(lane));

/** The BullMQ queue `poll-<lane>` under `{<prefix>}`, with the poll job defaults and an error listener. */
export function createPollQueue(lane: PollLane, options: QueueOptions): PollQueue {
  return createQueue<PollJobData>(
    { name: pollQueueName(lane), defaultJobOptions: POLL_JOB_OPTIONS, label: `poll queue (${lane})` },
    options,
  );
}

/** One poll queue per lane. */
export function createPollQueues(options: QueueOptions): PollQueues {
  return { fleet: createPollQueue('fleet', options), robots: createPollQueue('robots', options) };
}

/**
 * One poll job: a shard of one poller's tick. `ids` lists the shard's entities for per-entity
 * pollers (fixed when the tick is planned, so every run of the job polls the same entities); list
 * pollers have a single shard and no ids.
 */
export interface PollJobData {
  poller: PollerName;
  /** `Math.floor(epochMs / interval)` when the tick was planned. */
  tick: number;
  /** 0-based. */
  shard: number;
  shards: number;
  ids?: string[];
  /**
   * When within its tick the job is meant to start (ms after the tick's start): a tick's shards
   * are spread over part of the interval (`worker.spread`) instead of all starting at once.
   */
  offsetMs?: number;
}

/**
 * Planned start of shard `shard` of `shards` within its tick: evenly over the first `spread` of
 * the interval, so a large fleet's requests (and the events they find) flow steadily rather than
 * as one burst per tick. One shard starts at once.
 *
 * `phase` (0 ≤ phase < 1) shifts every shard by that fraction of one shard's slot: pollers on the
 * same interval given different phases start their shards in turn instead of all together (see
 * `pollerPhase`), and none of them at the tick's first instant, when the list polls start.
 */
export function shardOffset(
  shard: number,
  shards: number,
  intervalMs: number,
  spread: number,
  phase = 0,
): number {
  if (shards <= 1 || spread <= 0) return 0;
  return Math.floor((intervalMs * spread * (shard + phase)) / shards);
}

/**
 * The phase (`shardOffset`) of the `index`-th of `count` per-entity pollers: `(index + 1) /
 * (count + 1)`, evenly between the slots' starts and never 0. With six per-entity pollers on one
 * interval, a slot then starts one poller's shard every seventh of it instead of six at once, so
 * the requests, Redis writes and CPU they take come as a steady stream.
 */
export function pollerPhase(index: number, count: number): number {
  if (count < 1 || index < 0 || index >= count) return 0;
  return (index + 1) / (count + 1);
}

/** BullMQ job id of a shard: `poll-<poller>-<tick>-<shard>of<shards>` (no `:`, never all digits). */
export function pollJobId(data: Pick<PollJobData, 'poller' | 'tick' | 'shard' | 'shards'>): string {
  return `poll-${data.poller}-${data.tick}-${data.shard}of${data.shards}`;
}

/**
 * The shard itself, whatever the tick: `poll-<poller>-<shard>of<shards>`, the BullMQ deduplication
 * id of its jobs. While one job of a shard waits or runs, a later tick adds none for it (the
 * scheduler counts it as coalesced): a poller that cannot keep up polls every shard less often,
 * in turn, instead of piling up jobs and dropping the same late shards every tick.
 */
export function pollShardId(data: Pick<PollJobData, 'poller' | 'shard' | 'shards'>): string {
  return `poll-${data.poller}-${data.shard}of${data.shards}`;
}
