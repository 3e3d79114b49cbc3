import type { EntityKind } from '../events/types.js';

/**
 * Redis key layout. Every key fleetwatch writes lives under ONE hash tag, `{<prefix>}`, so that all
 * of them land in the same Redis Cluster slot: the commit script touches a snapshot, the outbox,
 * the event log and an entity index in one call, and BullMQ (prefix `{<prefix>}`) shares the slot.
 *
 * ```
 * {p}:snap:<kind>:<id>:<signal>        hash    one entity signal's last observation (versioned)
 * {p}:snap:fleet:<kind>:membership     hash    list-level snapshot (which ids the list returned)
 * {p}:outbox                           stream  events committed but not yet handed to BullMQ
 * {p}:outbox:rejected                  stream  outbox entries the relay could not parse (kept, not lost)
 * {p}:events                           stream  event log, capped with MAXLEN ~
 * {p}:lease:poll:<kind>:<id>:<signal>  string  poll lease (owner token, PX ttl)
 * {p}:index:<kind>                     zset    known entity ids, score = first seen (epoch ms)
 * {p}:upstream:window:<name>:<n>       hash    request counts of upstream <name> in window n (expires)
 * {p}:<queue>:...                      BullMQ  (prefix `{p}`)
 * ```
 *
 * Ids and signals are percent-encoded (`encodeURIComponent`), so an id holding `{`, `}` or `:` can
 * neither break the hash tag nor make two different (kind, id, signal) triples share a key.
 */

export const DEFAULT_PREFIX = 'fw';

/** `vehicle`, `robot`, or `fleet` for list-level snapshots (then `id` is the listed kind). */
export type SnapshotKind = EntityKind | 'fleet';

const PREFIX_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Throws when `prefix` could break the hash tag (same rule as the config schema). */
export function assertPrefix(prefix: string): void {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new TypeError(`invalid Redis key prefix ${JSON.stringify(prefix)}: use letters, digits, _ or -`);
  }
}

/** `{<prefix>}`: the hash tag every key starts with. */
export function hashTag(prefix: string): string {
  assertPrefix(prefix);
  return `{${prefix}}`;
}

/** The `prefix` option for every BullMQ Queue/Worker/FlowProducer: keys become `{<prefix>}:<queue>:...`. */
export function bullPrefix(prefix: string): string {
  return hashTag(prefix);
}

/** Encodes one key segment: no `{`, `}`, `:` or whitespace survives, and decoding is unambiguous. */
export function encodeSegment(value: string): string {
  if (value.length === 0) throw new TypeError('a key segment must not be empty');
  return encodeURIComponent(value);
}

export function decodeSegment(value: string): string {
  return decodeURIComponent(value);
}

export interface StoreKeys {
  readonly prefix: string;
  /** `{<prefix>}` */
  readonly tag: string;
  /** Outbox stream: events waiting for the relay. */
  readonly outbox: string;
  /** Where the relay parks outbox entries it cannot parse. */
  readonly outboxRejected: string;
  /** Event log stream (capped). */
  readonly events: string;
  snapshot(kind: SnapshotKind, id: string, signal: string): string;
  /** List-level snapshot of a kind: `{p}:snap:fleet:<kind>:membership`. */
  membership(kind: EntityKind): string;
  pollLease(kind: SnapshotKind, id: string, signal: string): string;
  /** Sorted set of known ids of a kind (members are raw ids, score = first seen ms). */
  index(kind: EntityKind): string;
  /** Request counts of one upstream (`token`, `fleet`, `robots`) in one counting window. */
  upstreamWindow(name: string, window: number): string;
}

export function storeKeys(prefix: string = DEFAULT_PREFIX): StoreKeys {
  const tag = hashTag(prefix);
  const snapshot = (kind: SnapshotKind, id: string, signal: string): string =>
    `${tag}:snap:${encodeSegment(kind)}:${encodeSegment(id)}:${encodeSegment(signal)}`;
  return {
    prefix,
    tag,
    outbox: `${tag}:outbox`,
    outboxRejected: `${tag}:outbox:rejected`,
    events: `${tag}:events`,
    snapshot,
    membership: (kind) => snapshot('fleet', kind, 'membership'),
    pollLease: (kind, id, signal) =>
      `${tag}:lease:poll:${encodeSegment(kind)}:${encodeSegment(id)}:${encodeSegment(signal)}`,
    index: (kind) => `${tag}:index:${encodeSegment(kind)}`,
    upstreamWindow: (name, window) => `${tag}:upstream:window:${encodeSegment(name)}:${window}`,
  };
}
