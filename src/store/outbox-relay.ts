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
import { type StoreKeys, storeKeys } from './keys.js';
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
  #reader: RedisClient | undefined;
  #controller = new AbortController();
  #loop: Promise<void> | undefined;
  #groupReady = false;
  #relayed = 0;
  #reclaimed = 0;

  constructor(options: OutboxRelayOptions) {
    this.#options = options;
    this.keys = storeKeys(options.prefix);
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
    return this.#loop !== undefined;
  }

  /**
   * Starts the loop. Resolves once the consumer group exists (or `stop` is called first); the loop
   * keeps retrying in the background while Redis is unreachable, so callers need not await this.
   */
  start(): Promise<void> {
    if (this.#loop) return Promise.resolve();
    this.#controller = new AbortController();
    this.#reader = duplicateForBlocking(this.#options.redis, `relay:${this.consumer}`, this.#logger);
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      markStarted = resolve;
    });
    this.#controller.signal.addEventListener('abort', () => markStarted(), { once: true });
    this.#loop = this.#run(this.#reader, markStarted);
    return started;
  }

  /** Lets the current batch finish (add + ack), then returns; closes the relay's connection. */
  async stop(): Promise<void> {
    const loop = this.#loop;
    const reader = this.#reader;
    if (!loop || !reader) return;
    this.#controller.abort();
    await loop;
    await this.#forgetConsumer(reader);
    await closeQuietly(reader);
    this.#loop = undefined;
    this.#reader = undefined;
    this.#groupReady = false;
  }

  async #run(reader: RedisClient, markStarted: () => void): Promise<void> {
    const signal = this.#controller.signal;
    let failures = 0;
    // Our own pending entries (after a failed batch) are re-read before new ones.
    let ownPending = false;
    let nextClaimAt = 0;
    while (!signal.aborted) {
      try {
        await waitForReady(reader, { signal });
        if (!this.#groupReady) await this.#ensureGroup(reader);
        markStarted();
        if (Date.now() >= nextClaimAt) {
          await this.#reclaim(reader);
          nextClaimAt = Date.now() + this.#claimIntervalMs;
        }
        if (signal.aborted) break;
        const entries = await this.#read(reader, ownPending ? 'own-pending' : 'new');
        if (ownPending && entries.length === 0) ownPending = false;
        if (entries.length > 0) await this.#deliver(reader, entries);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (isNoGroup(error)) this.#groupReady = false;
        failures += 1;
        ownPending = true;
        const wait = retryDelay(failures);
        this.#logger?.warn(
          { err: (error as Error).message, failures, retryInMs: wait },
          'outbox relay batch failed; retrying',
        );
        await delay(wait, undefined, { signal }).catch(() => {});
      }
    }
  }

  async #ensureGroup(reader: RedisClient): Promise<void> {
    try {
      await reader.xgroup('CREATE', this.keys.outbox, this.#group, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('BUSYGROUP'))) throw error;
    }
    this.#groupReady = true;
  }

  /**
   * One XREADGROUP: new entries (`>`, blocking up to `blockMs`), or this consumer's own pending
   * ones (`0`, never blocking: they are there or not).
   */
  async #read(reader: RedisClient, which: 'new' | 'own-pending'): Promise<RawStreamEntry[]> {
    const block = which === 'new' ? ['BLOCK', this.#blockMs] : [];
    const reply = (await reader.xreadgroup(
      'GROUP',
      this.#group,
      this.consumer,
      'COUNT',
      this.#batchSize,
      // ioredis types each argument list separately; this is one of the two shapes above.
      ...(block as []),
      'STREAMS',
      this.keys.outbox,
      which === 'new' ? '>' : '0',
    )) as RawStreamsReply;
    return firstStreamEntries(reply);
  }

  /** Takes over entries left pending (idle ≥ claimIdleMs) by any consumer, and relays them. */
  async #reclaim(reader: RedisClient): Promise<void> {
    let cursor = '0-0';
    // Bounded so a huge backlog of stale entries does not starve new events.
    for (let round = 0; round < 10; round += 1) {
      const [next, entries] = (await reader.xautoclaim(
        this.keys.outbox,
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
          { count: entries.length },
          'reclaimed outbox entries left pending by another relay',
        );
        await this.#deliver(reader, entries);
      }
      if (next === '0-0' || this.#controller.signal.aborted) return;
      cursor = next;
    }
  }

  async #deliver(reader: RedisClient, entries: readonly RawStreamEntry[]): Promise<void> {
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
      tx.xadd(
        this.keys.outboxRejected,
        '*',
        'streamId',
        entry.streamId,
        'reason',
        entry.reason,
        ...entry.fields,
      );
    }
    tx.xack(this.keys.outbox, this.#group, ...ids);
    tx.xdel(this.keys.outbox, ...ids);
    const results = await tx.exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error('outbox acknowledgement was aborted');

    this.#relayed += jobs.length;
    if (rejected.length > 0) {
      this.#logger?.error(
        { count: rejected.length, key: this.keys.outboxRejected, reason: rejected[0]?.reason },
        'unparseable outbox entries moved aside',
      );
    }
    this.#logger?.debug({ count: jobs.length }, 'relayed outbox entries');
  }

  /** Removes this consumer from the group on a clean stop, but only when it holds nothing pending. */
  async #forgetConsumer(reader: RedisClient): Promise<void> {
    try {
      if (reader.status !== 'ready') return;
      const pending = (await reader.xpending(
        this.keys.outbox,
        this.#group,
        '-',
        '+',
        1,
        this.consumer,
      )) as unknown[];
      if (pending.length === 0)
        await reader.xgroup('DELCONSUMER', this.keys.outbox, this.#group, this.consumer);
    } catch (error) {
      this.#logger?.debug({ err: (error as Error).message }, 'could not remove relay consumer');
    }
  }
}
