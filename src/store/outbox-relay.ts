import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { FleetEvent } from '../events/types.js';
import {
  closeQuietly,
  duplicateForBlocking,
  type RedisClient,
  retryDelay,
  waitForReady,
} from '../lib/redis-connection.js';
import { type ShardKeys, type StoreKeys, storeKeys } from './keys.js';
import {
  fieldsToRecord,
  firstStreamEntries,
  type RawAutoclaimReply,
  type RawStreamEntry,
  type RawStreamsReply,
} from './stream-entries.js';

/**
 * Moves committed events from the outbox stream into the BullMQ `events` queue.
 *
 * Per batch: XREADGROUP (group `relay`) → `queue.addBulk` with job id = event id → XACK + XDEL (one
 * MULTI). A relay that dies between the add and the ack leaves its entries pending; any relay
 * reclaims them with XAUTOCLAIM once idle for `claimIdleMs` and adds them again, which BullMQ
 * ignores because the job id already exists. So any number of relays may run (one per replica),
 * and each event becomes exactly one job. Redis errors are logged and retried with back-off; the
 * loop never throws.
 *
 * With N shards each shard has its own outbox (keys.ts), and XREADGROUP with BLOCK reads one slot:
 * a relay runs one such loop per shard, each on its own blocking connection, all adding to the one
 * `events` queue. Per-subject order
 * holds, since a subject's events are all in its shard's outbox, and the events worker orders them
 * by their order list anyway (Guarantee 6).
 */

export interface OutboxRelayHooks {
  /** Runs after the jobs were added and before the entries are acknowledged (tests: simulate a crash). */
  afterAdd?(eventIds: readonly string[]): void | Promise<void>;
}

export interface OutboxRelayOptions {
  /** Template connection: the relay duplicates it for its own blocking reads and closes the copy on `stop`. */
  redis: RedisClient;
  /** The BullMQ `events` queue (see `createEventsQueue`); not closed by the relay. */
  queue: Queue<FleetEvent, unknown, string>;
  prefix?: string;
  /** How many shards the outbox is spread over (keys.ts): one loop and connection each. Default 1. */
  shards?: number;
  /** Consumer group; default `relay`. */
  group?: string;
  /** Consumer name; default `<hostname>-<pid>-<random>`, unique per relay instance. */
  consumer?: string;
  /** Entries per batch; default 100. */
  batchSize?: number;
  /** XREADGROUP BLOCK; default 1,000 ms (also bounds how long `stop` waits). */
  blockMs?: number;
  /** Pending entries idle this long belong to a dead relay and are reclaimed; default 30,000 ms. */
  claimIdleMs?: number;
  /** How often to look for such entries; default `min(claimIdleMs, 10 s)`. */
  claimIntervalMs?: number;
  logger?: Logger;
  hooks?: OutboxRelayHooks;
}

export const DEFAULT_RELAY_GROUP = 'relay';

function isNoGroup(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOGROUP');
}

/** One shard's loop: its keys, its blocking connection, whether its consumer group is known to exist. */
interface ShardLoop {
  keys: ShardKeys;
  reader: RedisClient;
  groupReady: boolean;
  done: Promise<void>;
}

export class OutboxRelay {
  readonly keys: StoreKeys;
  readonly consumer: string;
  readonly #options: OutboxRelayOptions;
  readonly #group: string;
  readonly #batchSize: number;
  readonly #blockMs: number;
  readonly #claimIdleMs: number;
  readonly #claimIntervalMs: number;
  readonly #logger: Logger | undefined;
  #loops: ShardLoop[] | undefined;
  #controller = new AbortController();
  #relayed = 0;
  #reclaimed = 0;

  constructor(options: OutboxRelayOptions) {
    this.#options = options;
    this.keys = storeKeys(options.prefix, options.shards);
    this.#group = options.group ?? DEFAULT_RELAY_GROUP;
    this.consumer = options.consumer ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.#batchSize = options.batchSize ?? 100;
    this.#blockMs = options.blockMs ?? 1_000;
    this.#claimIdleMs = options.claimIdleMs ?? 30_000;
    this.#claimIntervalMs = options.claimIntervalMs ?? Math.min(this.#claimIdleMs, 10_000);
    this.#logger = options.logger?.child({ component: 'outbox-relay', consumer: this.consumer });
  }

  /** Events handed to BullMQ by this relay (including re-adds that BullMQ deduplicated). */
  get relayed(): number {
    return this.#relayed;
  }

  /** Entries this relay took over from idle consumers. */
  get reclaimed(): number {
    return this.#reclaimed;
  }

  get running(): boolean {
    return this.#loops !== undefined;
  }

  /**
   * Starts the loops (one per shard). Resolves once every shard's consumer group exists (or `stop`
   * is called first); the loops keep retrying in the background while Redis is unreachable, so
   * callers need not await this.
   */
  start(): Promise<void> {
    if (this.#loops) return Promise.resolve();
    this.#controller = new AbortController();
    const one = this.keys.shards === 1;
    const starts: Array<Promise<void>> = [];
    this.#loops = this.keys.allShards.map((keys) => {
      const name = one ? `relay:${this.consumer}` : `relay:${this.consumer}:${keys.shard}`;
      const reader = duplicateForBlocking(this.#options.redis, name, this.#logger);
      let markStarted!: () => void;
      starts.push(
        new Promise<void>((resolve) => {
          markStarted = resolve;
        }),
      );
      this.#controller.signal.addEventListener('abort', () => markStarted(), { once: true });
      const loop: ShardLoop = { keys, reader, groupReady: false, done: Promise.resolve() };
      loop.done = this.#run(loop, markStarted);
      return loop;
    });
    return Promise.all(starts).then(() => {});
  }

  /** Lets the current batches finish (add + ack), then returns; closes the relay's connections. */
  async stop(): Promise<void> {
    const loops = this.#loops;
    if (!loops) return;
    this.#controller.abort();
    await Promise.all(
      loops.map(async (loop) => {
        await loop.done;
        await this.#forgetConsumer(loop);
        await closeQuietly(loop.reader);
      }),
    );
    this.#loops = undefined;
  }

  async #run(loop: ShardLoop, markStarted: () => void): Promise<void> {
    const { reader } = loop;
    const signal = this.#controller.signal;
    let failures = 0;
    // Our own pending entries (after a failed batch) are re-read before new ones.
    let ownPending = false;
    let nextClaimAt = 0;
    while (!signal.aborted) {
      try {
        await waitForReady(reader, { signal });
        if (!loop.groupReady) await this.#ensureGroup(loop);
        markStarted();
        if (Date.now() >= nextClaimAt) {
          await this.#reclaim(loop);
          nextClaimAt = Date.now() + this.#claimIntervalMs;
        }
        if (signal.aborted) break;
        const entries = await this.#read(loop, ownPending ? 'own-pending' : 'new');
        if (ownPending && entries.length === 0) ownPending = false;
        if (entries.length > 0) await this.#deliver(loop, entries);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (isNoGroup(error)) loop.groupReady = false;
        failures += 1;
        ownPending = true;
        const wait = retryDelay(failures);
        this.#logger?.warn(
          { err: (error as Error).message, failures, retryInMs: wait, shard: loop.keys.shard },
          'outbox relay batch failed; retrying',
        );
        await delay(wait, undefined, { signal }).catch(() => {});
      }
    }
  }

  async #ensureGroup(loop: ShardLoop): Promise<void> {
    try {
      await loop.reader.xgroup('CREATE', loop.keys.outbox, this.#group, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('BUSYGROUP'))) throw error;
    }
    loop.groupReady = true;
  }

  /**
   * One XREADGROUP: new entries (`>`, blocking up to `blockMs`), or this consumer's own pending
   * ones (`0`, never blocking: they are there or not).
   */
  async #read(loop: ShardLoop, which: 'new' | 'own-pending'): Promise<RawStreamEntry[]> {
    const block = which === 'new' ? ['BLOCK', this.#blockMs] : [];
    const reply = (await loop.reader.xreadgroup(
      'GROUP',
      this.#group,
      this.consumer,
      'COUNT',
      this.#batchSize,
      // ioredis types each argument list separately; this is one of the two shapes above.
      ...(block as []),
      'STREAMS',
      loop.keys.outbox,
      which === 'new' ? '>' : '0',
    )) as RawStreamsReply;
    return firstStreamEntries(reply);
  }

  /** Takes over entries left pending (idle ≥ claimIdleMs) by any consumer, and relays them. */
  async #reclaim(loop: ShardLoop): Promise<void> {
    let cursor = '0-0';
    // Bounded so a huge backlog of stale entries does not starve new events.
    for (let round = 0; round < 10; round += 1) {
      const [next, entries] = (await loop.reader.xautoclaim(
        loop.keys.outbox,
        this.#group,
        this.consumer,
        this.#claimIdleMs,
        cursor,
        'COUNT',
        this.#batchSize,
      )) as RawAutoclaimReply;
      if (entries.length > 0) {
        this.#reclaimed += entries.length;
        this.#logger?.info(
          { count: entries.length, shard: loop.keys.shard },
          'reclaimed outbox entries left pending by another relay',
        );
        await this.#deliver(loop, entries);
      }
      if (next === '0-0' || this.#controller.signal.aborted) return;
      cursor = next;
    }
  }

  async #deliver(loop: ShardLoop, entries: readonly RawStreamEntry[]): Promise<void> {
    const { keys, reader } = loop;
    const jobs: Array<{ name: string; data: FleetEvent; opts: { jobId: string } }> = [];
    const rejected: Array<{ streamId: string; fields: string[]; reason: string }> = [];
    for (const [streamId, fields] of entries) {
      // Redis 6.2 reports an entry deleted while pending with null fields: just acknowledge it.
      if (!fields) continue;
      const record = fieldsToRecord(fields);
      try {
        const event = JSON.parse(record.event ?? '') as FleetEvent;
        if (typeof event.id !== 'string' || event.id !== record.id || typeof event.type !== 'string') {
          throw new Error('event id/type missing or not matching the entry');
        }
        jobs.push({ name: event.type, data: event, opts: { jobId: event.id } });
      } catch (error) {
        rejected.push({ streamId, fields, reason: (error as Error).message });
      }
    }

    if (jobs.length > 0) await this.#options.queue.addBulk(jobs);
    const eventIds = jobs.map((job) => job.opts.jobId);
    await this.#options.hooks?.afterAdd?.(eventIds);

    const ids = entries.map(([streamId]) => streamId);
    const tx = reader.multi();
    for (const entry of rejected) {
      tx.xadd(keys.outboxRejected, '*', 'streamId', entry.streamId, 'reason', entry.reason, ...entry.fields);
    }
    tx.xack(keys.outbox, this.#group, ...ids);
    tx.xdel(keys.outbox, ...ids);
    const results = await tx.exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error('outbox acknowledgement was aborted');

    this.#relayed += jobs.length;
    if (rejected.length > 0) {
      this.#logger?.error(
        { count: rejected.length, key: keys.outboxRejected, reason: rejected[0]?.reason },
        'unparseable outbox entries moved aside',
      );
    }
    this.#logger?.debug({ count: jobs.length }, 'relayed outbox entries');
  }

  /** Removes this consumer from the group on a clean stop, but only when it holds nothing pending. */
  async #forgetConsumer({ keys, reader }: ShardLoop): Promise<void> {
    try {
      if (reader.status !== 'ready') return;
      const pending = (await reader.xpending(
        keys.outbox,
        this.#group,
        '-',
        '+',
        1,
        this.consumer,
      )) as unknown[];
      if (pending.length === 0) await reader.xgroup('DELCONSUMER', keys.outbox, this.#group, this.consumer);
    } catch (error) {
      this.#logger?.debug({ err: (error as Error).message }, 'could not remove relay consumer');
    }
  }
}
