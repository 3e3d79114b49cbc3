import { setTimeout as delay } from 'node:timers/promises';
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
import { compareLogIds, endBefore, readAfter, startAfter, toLogId } from './log-ids.js';
import { mergeByLogId, type ShardEntry } from './log-merge.js';
import {
  fieldsToRecord,
  firstStreamEntries,
  isStreamId,
  type RawStreamEntry,
  type RawStreamsReply,
} from './stream-entries.js';

/**
 * The event log: a capped Redis stream `{p}:events`, appended by the commit script (same atomic
 * call as the snapshot swap) with `XADD MAXLEN ~ <cap>`. Each entry: `id` (event id), `type`,
 * `subject`, `event` (the CloudEvent JSON). Read here for the HTTP API and its SSE live tail.
 *
 * With N shards each shard has its own stream (`{s}:events`, the cap split over them) and readers
 * merge them by time (to the millisecond: entries of one millisecond in different shards come in
 * shard order); an entry is then named by its merged id (log-ids.ts). A live tail follows
 * every shard on a connection of its own and passes entries on in merged-id order, each held until
 * no shard can still bring an earlier one, for at most `holdMs` (log-merge.ts).
 */

export const DEFAULT_EVENT_LOG_CAP = 100_000;
export const DEFAULT_RANGE_LIMIT = 100;
export const MAX_RANGE_LIMIT = 10_000;

export interface EventLogEntry {
  /** Stream id (`<ms>-<seq>`, the time Redis recorded the event); usable as an SSE `id` / `since`. */
  streamId: string;
  event: FleetEvent;
}

export interface EventFilter {
  /** Glob on the event type: `*` any run of characters, `?` one character (`vehicle.vpn.*`). */
  type?: string;
  /** Exact subject (`vehicle/V-1`). */
  subject?: string;
}

export interface RangeQuery extends EventFilter {
  /**
   * A stream id (exclusive: entries after it, for paging forward) or an ISO 8601 time (inclusive,
   * compared with when Redis recorded the event, not the observation time).
   */
  since?: string;
  /**
   * A stream id (exclusive): the newest `limit` entries before it, for paging back from the newest.
   * Not with `since`.
   */
  before?: string;
  /** Default 100, at most 10,000. */
  limit?: number;
}

export interface TailOptions extends EventFilter {
  /** `$` (default): only events appended after `ready` resolves; or a stream id to resume after. */
  fromId?: string;
  /** Ends the iteration (and closes its connection) when aborted. */
  signal?: AbortSignal;
  /** XREAD BLOCK time per round; default 5 s. */
  blockMs?: number;
  /** With several shards: how long an entry waits for earlier ones of other shards (log-merge.ts); default 1 s. */
  holdMs?: number;
}

/** An async iterator over new log entries, with its own Redis connection. */
export interface EventTail extends AsyncIterableIterator<EventLogEntry> {
  /** Resolves with the stream id the tail starts after (a `$` is resolved to the then-last entry). */
  readonly ready: Promise<string>;
  /** Stops the tail and closes its connection. */
  close(): Promise<void>;
}

export interface EventLogOptions {
  /** Used for range/count; a tail duplicates it for its blocking reads. Not closed by the log. */
  redis: RedisClient;
  prefix?: string;
  /** How many shards the log is kept over (keys.ts). Default 1. */
  shards?: number;
  logger?: Logger;
}

/** Compiles a type glob into a RegExp (anchored). */
export function globToRegExp(glob: string): RegExp {
  const source = glob
    .split('')
    .map((char) => {
      if (char === '*') return '.*';
      if (char === '?') return '.';
      return char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`);
}

type EntryMatcher = (fields: Record<string, string>) => boolean;

function matcher(filter: EventFilter): EntryMatcher {
  const type = filter.type && filter.type !== '*' ? globToRegExp(filter.type) : undefined;
  const subject = filter.subject;
  return (fields) =>
    (type === undefined || type.test(fields.type ?? '')) &&
    (subject === undefined || fields.subject === subject);
}

function decodeEntry([streamId, raw]: RawStreamEntry, matches: EntryMatcher): EventLogEntry | undefined {
  const fields = fieldsToRecord(raw);
  if (fields.event === undefined || !matches(fields)) return undefined;
  try {
    return { streamId, event: JSON.parse(fields.event) as FleetEvent };
  } catch {
    return undefined;
  }
}

const byLogId = (a: EventLogEntry, b: EventLogEntry): number => compareLogIds(a.streamId, b.streamId);

function clampLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_RANGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
  return Math.min(limit, MAX_RANGE_LIMIT);
}

/** An ISO 8601 date or time (`2026-03-01`, `2026-03-01T22:00:00Z`) a `since` may be. */
function isIsoTime(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}([T ]|$)/.test(value) && Number.isFinite(Date.parse(value));
}

/** What `range({ since })` takes: a stream id (exclusive) or an ISO 8601 time (inclusive). */
export function isSince(value: string): boolean {
  return isStreamId(value) || isIsoTime(value);
}

/** Translates `since` into an XRANGE start bound of `shard` of `shards`. */
function startBound(since: string, shard: number, shards: number): string {
  if (isStreamId(since)) return startAfter(since, shard, shards);
  const ms = Date.parse(since);
  if (!Number.isFinite(ms)) throw new RangeError(`since must be a stream id or an ISO 8601 time: ${since}`);
  return String(Math.max(ms, 0));
}

export class EventLog {
  readonly keys: StoreKeys;
  readonly #redis: RedisClient;
  readonly #logger: Logger | undefined;

  constructor(options: EventLogOptions) {
    this.#redis = options.redis;
    this.keys = storeKeys(options.prefix, options.shards);
    this.#logger = options.logger;
  }

  /** Number of entries in the log (XLEN, summed over the shards). */
  async count(): Promise<number> {
    const lengths = await Promise.all(this.keys.allShards.map((shard) => this.#redis.xlen(shard.events)));
    return lengths.reduce((sum, n) => sum + n, 0);
  }

  /**
   * Matching entries, oldest first (newest last). With `since`: the first `limit` entries after it
   * (page forward by passing the last `streamId` back). Without: the newest `limit` entries, or
   * with `before` the newest `limit` before it (page back by passing the first `streamId`).
   */
  async range(query: RangeQuery = {}): Promise<EventLogEntry[]> {
    const limit = clampLimit(query.limit);
    const matches = matcher(query);
    const shards = this.keys.allShards;
    if (query.since !== undefined) {
      const since = query.since;
      const found = await Promise.all(
        shards.map((shard) =>
          this.#forward(shard, startBound(since, shard.shard, shards.length), limit, matches),
        ),
      );
      return shards.length === 1 ? (found[0] ?? []) : found.flat().sort(byLogId).slice(0, limit);
    }
    if (query.before !== undefined && !isStreamId(query.before))
      throw new RangeError(`before must be a stream id: ${query.before}`);
    const before = query.before;
    const found = await Promise.all(
      shards.map((shard) =>
        this.#backward(
          shard,
          before === undefined ? '+' : endBefore(before, shard.shard, shards.length),
          limit,
          matches,
        ),
      ),
    );
    return shards.length === 1 ? (found[0] ?? []) : found.flat().sort(byLogId).slice(-limit);
  }

  /**
   * When a capped shard log has dropped entries and `fromId` is older than its first entry, events
   * after `fromId` may be gone: the merged id of the earliest such first entry. Best effort
   * (Redis ≥ 7 reports `entries-added`); undefined when in doubt.
   */
  async gapAfter(fromId: string): Promise<{ lastEventId: string; firstAvailable: string } | undefined> {
    const shards = this.keys.shards;
    const firsts = await Promise.all(
      this.keys.allShards.map(async (shard) => {
        try {
          const reply = (await this.#redis.xinfo('STREAM', shard.events)) as unknown[];
          const info = new Map<string, unknown>();
          for (let i = 0; i + 1 < reply.length; i += 2) info.set(String(reply[i]), reply[i + 1]);
          const added = Number(info.get('entries-added'));
          const length = Number(info.get('length'));
          const first = (info.get('first-entry') as [string, unknown] | null | undefined)?.[0];
          if (!Number.isFinite(added) || !(added > length) || typeof first !== 'string') return undefined;
          const merged = toLogId(first, shard.shard, shards);
          return compareLogIds(fromId, merged) < 0 ? merged : undefined;
        } catch {
          return undefined;
        }
      }),
    );
    const gaps = firsts.filter((id): id is string => id !== undefined).sort(compareLogIds);
    return gaps[0] === undefined ? undefined : { lastEventId: fromId, firstAvailable: gaps[0] };
  }

  /** The first `limit` matching entries of one shard from `start` on, oldest first. */
  #forward(shard: ShardKeys, from: string, limit: number, matches: EntryMatcher): Promise<EventLogEntry[]> {
    return this.#scan(shard, 'forward', from, limit, matches);
  }

  /** The newest `limit` matching entries of one shard up to `end`, oldest first. */
  async #backward(
    shard: ShardKeys,
    to: string,
    limit: number,
    matches: EntryMatcher,
  ): Promise<EventLogEntry[]> {
    return (await this.#scan(shard, 'backward', to, limit, matches)).reverse();
  }

  /**
   * Up to `limit` matching entries of one shard from `at` on in `direction` (XRANGE or XREVRANGE),
   * in the order read, in chunks of at least 500.
   */
  async #scan(
    shard: ShardKeys,
    direction: 'forward' | 'backward',
    at: string,
    limit: number,
    matches: EntryMatcher,
  ): Promise<EventLogEntry[]> {
    const chunk = Math.max(limit, 500);
    const found: EventLogEntry[] = [];
    let bound = at;
    for (;;) {
      const entries = (
        direction === 'forward'
          ? await this.#redis.xrange(shard.events, bound, '+', 'COUNT', chunk)
          : await this.#redis.xrevrange(shard.events, bound, '-', 'COUNT', chunk)
      ) as RawStreamEntry[];
      for (const entry of entries) {
        const decoded = this.#decode(entry, matches, shard);
        if (decoded) found.push(decoded);
        if (found.length >= limit) return found;
      }
      const last = entries.at(-1);
      if (entries.length < chunk || !last) return found;
      bound = `(${last[0]}`;
    }
  }

  /** An entry of `shard` under its merged id (its own with one shard). */
  #decode(entry: RawStreamEntry, matches: EntryMatcher, shard: ShardKeys): EventLogEntry | undefined {
    const decoded = decodeEntry(entry, matches);
    if (decoded && this.keys.shards > 1) decoded.streamId = toLogId(entry[0], shard.shard, this.keys.shards);
    return decoded;
  }

  /**
   * Follows the log with XREAD BLOCK on a connection of its own (one per shard). Survives Redis
   * reconnects (resumes after the last delivered id). Ends when `signal` aborts, `close()` is
   * called or the consumer leaves its `for await` loop.
   */
  tail(options: TailOptions = {}): EventTail {
    const from = options.fromId ?? '$';
    // Refused before a connection is opened: nothing is left behind to keep the process alive.
    if (from !== '$' && !isStreamId(from)) throw new RangeError(`fromId must be '$' or a stream id: ${from}`);
    const controller = new AbortController();
    const signal = controller.signal;
    const abort = (): void => controller.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) abort();
    const shards = this.keys.shards;
    const followers = this.keys.allShards.map((shard) => this.#follow(shard, from, options, signal));
    const ready = Promise.all(followers.map((follower) => follower.ready)).then((ids) =>
      ids.reduce((latest, id) => (compareLogIds(id, latest) > 0 ? id : latest), '0-0'),
    );
    ready.catch(() => {});

    const holdMs = options.holdMs;
    async function* merged(): AsyncGenerator<EventLogEntry, void, undefined> {
      try {
        if (shards === 1) {
          for await (const { value } of followers[0]!.entries) if (value) yield value;
          return;
        }
        // In merged-id order, each entry held until no shard can bring an earlier one (log-merge.ts).
        yield* mergeByLogId(followers, holdMs === undefined ? {} : { holdMs });
      } finally {
        options.signal?.removeEventListener('abort', abort);
        controller.abort();
        await Promise.all(followers.map((follower) => follower.entries.return(undefined)));
        await closeQuietly(followers.map((follower) => follower.connection));
      }
    }

    const iterator = merged();
    return Object.assign(iterator, {
      ready,
      close: async (): Promise<void> => {
        controller.abort();
        await iterator.return(undefined);
        await closeQuietly(followers.map((follower) => follower.connection));
      },
    });
  }

  /** One shard's part of a tail: its connection, where it starts (a merged id), its entries. */
  #follow(
    shard: ShardKeys,
    from: string,
    options: TailOptions,
    signal: AbortSignal,
  ): {
    connection: RedisClient;
    ready: Promise<string>;
    entries: AsyncGenerator<ShardEntry<EventLogEntry>, void, undefined>;
    behind(): boolean;
  } {
    const shards = this.keys.shards;
    const key = shard.events;
    const logger = this.#logger;
    const blockMs = options.blockMs ?? 5_000;
    const matches = matcher(options);
    const name = shards === 1 ? 'event-log-tail' : `event-log-tail:${shard.shard}`;
    const connection = duplicateForBlocking(this.#redis, name, logger);
    // An abort interrupts a blocked XREAD at once.
    signal.addEventListener('abort', () => connection.disconnect(), { once: true });
    if (signal.aborted) connection.disconnect();

    // This shard's own stream id to read after, and the merged id the tail starts after.
    const start = (async (): Promise<[own: string, merged: string]> => {
      await waitForReady(connection, { signal });
      if (from !== '$') return [readAfter(from, shard.shard, shards), from];
      const last = (await connection.xrevrange(key, '+', '-', 'COUNT', 1)) as RawStreamEntry[];
      const own = last[0]?.[0] ?? '0-0';
      return [own, last[0] ? toLogId(own, shard.shard, shards) : '0-0'];
    })();
    start.catch(() => {});
    const decode = (entry: RawStreamEntry) => this.#decode(entry, matches, shard);

    let failing = false;
    async function* entries(): AsyncGenerator<ShardEntry<EventLogEntry>, void, undefined> {
      try {
        let lastId: string;
        try {
          [lastId] = await start;
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        let failures = 0;
        while (!signal.aborted) {
          let read: RawStreamEntry[];
          try {
            const reply = (await connection.xread(
              'COUNT',
              100,
              'BLOCK',
              blockMs,
              'STREAMS',
              key,
              lastId,
            )) as RawStreamsReply;
            read = firstStreamEntries(reply);
            failures = 0;
            failing = false;
          } catch (error) {
            if (signal.aborted) return;
            failures += 1;
            failing = true;
            logger?.warn({ err: (error as Error).message, failures }, 'event log tail read failed; retrying');
            await delay(retryDelay(failures), undefined, { signal }).catch(() => {});
            await waitForReady(connection, { signal }).catch(() => {});
            continue;
          }
          for (const entry of read) {
            lastId = entry[0];
            const decoded = decode(entry);
            yield { id: decoded?.streamId ?? toLogId(entry[0], shard.shard, shards), value: decoded };
          }
        }
      } finally {
        await closeQuietly(connection);
      }
    }

    return {
      connection,
      ready: start.then(([, merged]) => merged),
      entries: entries(),
      behind: () => failing || connection.status !== 'ready',
    };
  }
}
