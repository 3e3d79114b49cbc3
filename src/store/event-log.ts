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
import { type StoreKeys, storeKeys } from './keys.js';
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

/** Translates `since` into an XRANGE start bound. */
function startBound(since: string): string {
  if (isStreamId(since)) return `(${since}`;
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
    this.keys = storeKeys(options.prefix);
    this.#logger = options.logger;
  }

  /** Number of entries in the log (XLEN). */
  count(): Promise<number> {
    return this.#redis.xlen(this.keys.events);
  }

  /**
   * Matching entries, oldest first (newest last). With `since`: the first `limit` entries after it
   * (page forward by passing the last `streamId` back). Without: the newest `limit` entries, or
   * with `before` the newest `limit` before it (page back by passing the first `streamId`).
   */
  async range(query: RangeQuery = {}): Promise<EventLogEntry[]> {
    const limit = clampLimit(query.limit);
    const matches = matcher(query);
    const chunk = Math.max(limit, 500);
    const found: EventLogEntry[] = [];
    const key = this.keys.events;

    if (query.since !== undefined) {
      let start = startBound(query.since);
      for (;;) {
        const entries = (await this.#redis.xrange(key, start, '+', 'COUNT', chunk)) as RawStreamEntry[];
        for (const entry of entries) {
          const decoded = decodeEntry(entry, matches);
          if (decoded) found.push(decoded);
          if (found.length >= limit) return found;
        }
        const last = entries.at(-1);
        if (entries.length < chunk || !last) return found;
        start = `(${last[0]}`;
      }
    }

    if (query.before !== undefined && !isStreamId(query.before))
      throw new RangeError(`before must be a stream id: ${query.before}`);
    let end = query.before === undefined ? '+' : `(${query.before}`;
    for (;;) {
      const entries = (await this.#redis.xrevrange(key, end, '-', 'COUNT', chunk)) as RawStreamEntry[];
      for (const entry of entries) {
        const decoded = decodeEntry(entry, matches);
        if (decoded) found.push(decoded);
        if (found.length >= limit) return found.reverse();
      }
      const last = entries.at(-1);
      if (entries.length < chunk || !last) return found.reverse();
      end = `(${last[0]}`;
    }
  }

  /**
   * Follows the log with XREAD BLOCK on a connection of its own. Survives Redis reconnects (resumes
   * after the last delivered id). Ends when `signal` aborts, `close()` is called or the consumer
   * leaves its `for await` loop.
   */
  tail(options: TailOptions = {}): EventTail {
    const from = options.fromId ?? '$';
    // Refused before a connection is opened: nothing is left behind to keep the process alive.
    if (from !== '$' && !isStreamId(from)) throw new RangeError(`fromId must be '$' or a stream id: ${from}`);
    const key = this.keys.events;
    const logger = this.#logger;
    const blockMs = options.blockMs ?? 5_000;
    const matches = matcher(options);
    const connection = duplicateForBlocking(this.#redis, 'event-log-tail', logger);
    const controller = new AbortController();
    const signal = controller.signal;
    const abort = (): void => controller.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) abort();
    // An abort interrupts a blocked XREAD at once.
    signal.addEventListener('abort', () => connection.disconnect(), { once: true });

    const ready = (async (): Promise<string> => {
      await waitForReady(connection, { signal });
      if (from !== '$') return from;
      const last = (await connection.xrevrange(key, '+', '-', 'COUNT', 1)) as RawStreamEntry[];
      return last[0]?.[0] ?? '0-0';
    })();
    ready.catch(() => {});

    async function* follow(): AsyncGenerator<EventLogEntry, void, undefined> {
      try {
        let lastId: string;
        try {
          lastId = await ready;
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        let failures = 0;
        while (!signal.aborted) {
          let entries: RawStreamEntry[];
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
            entries = firstStreamEntries(reply);
            failures = 0;
          } catch (error) {
            if (signal.aborted) return;
            failures += 1;
            logger?.warn({ err: (error as Error).message, failures }, 'event log tail read failed; retrying');
            await delay(retryDelay(failures), undefined, { signal }).catch(() => {});
            await waitForReady(connection, { signal }).catch(() => {});
            continue;
          }
          for (const entry of entries) {
            lastId = entry[0];
            const decoded = decodeEntry(entry, matches);
            if (decoded) yield decoded;
          }
        }
      } finally {
        options.signal?.removeEventListener('abort', abort);
        controller.abort();
        await closeQuietly(connection);
      }
    }

    const iterator = follow();
    return Object.assign(iterator, {
      ready,
      close: async (): Promise<void> => {
        controller.abort();
        await iterator.return(undefined);
        await closeQuietly(connection);
      },
    });
  }
}
