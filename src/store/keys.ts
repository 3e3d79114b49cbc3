import type { EntityKind } from '../events/types.js';
import { assertPrefix, hashTag, shardTags, subjectShard } from './shards.js';

export { assertPrefix, hashTag };

/**
 * Redis key layout. With one shard (`redis.shards` = 1, the default) every key fleetwatch writes
 * lives under ONE hash tag, `{<prefix>}`, so all of them land in the same Redis Cluster slot. With
 * N shards the per-entity keys (snapshots, poll leases, entity index, outbox, event log, order
 * lists, incidents, a copy of the store marker) go under the tag of their subject's shard
 * (`{<prefix>.<i>-<salt>}`, shards.ts) instead of `{p}`: everything one commit touches is still in
 * one slot, and N shards spread a fleet over a Cluster's masters. Every other key (notification,
 * delivery, sessions, health, upstream windows, BullMQ with prefix `{<prefix>}`) stays under `{p}`.
 * Below, `{s}` is the shard's tag (`{p}` with one shard).
 *
 * ```
 * {s}:snap:<kind>:<id>:<facet>        hash    one facet of an entity: its last observation (versioned)
 * {s}:snap:fleet:<kind>:membership     hash    list-level snapshot (which ids the list returned)
 * {s}:outbox                           stream  events committed but not yet handed to BullMQ
 * {s}:outbox:rejected                  stream  outbox entries the relay could not parse (kept, not lost)
 * {s}:events                           stream  event log, capped with MAXLEN ~
 * {s}:changes                          stream  the snapshot key of each commit, capped: what changed since a reader looked
 * {s}:lease:poll:<kind>:<id>:<scope>  string  poll lease (owner token, PX ttl)
 * {s}:index:<kind>                     zset    known entity ids, score = first seen (epoch ms)
 * {p}:upstream:window:<name>:<n>       hash    request counts of upstream <name> in window n (expires)
 * {s}:store:marker                     hash    the store marker (a copy per shard): epoch, createdAt, replaced (store-marker.ts)
 * {p}:store:marker                     hash    the control marker: the same, the shard count, laidOut
 * {p}:health                           string  the Redis health check's write (lib/redis-health.ts, PX 60 s)
 * {s}:incident:<id>                    hash    one incident, open or recently closed (incidents.ts)
 * {s}:incidents:open                   hash    `<subject>#<key>` → id of the open incident
 * {s}:incidents:closed                 zset    closed incident ids, score = closed at (epoch ms)
 * {s}:incidents:rev                    string  counter bumped by every change to an incident
 * {s}:order:<subject>                  list    ids of the subject's events not yet dispatched, in commit order
 * {p}:session:<sha256 of session id>   string  one API login session (JSON, PX = http.session_ttl)
 * {p}:sessions:<token name>            zset    that token's sessions (sha256 of the id), score = expiry
 * {p}:notify:group:<groupKey>          hash    one aggregation group (notifyKeys below)
 * {p}:notify:group:<groupKey>:<list>   list    its pending events, closing ids, recent ids
 * {p}:notify:wake                      zset    group keys by when the flusher should look next
 * {p}:notify:subject:<subject>         set     group keys holding an open incident of that subject
 * {p}:silences                         hash    silence id → Silence JSON
 * {p}:delivered:<receiver>:<id>        string  delivered marker of a notification (EX 1 day)
 * {p}:receiver:<name>:disabled         hash    why a receiver is disabled (deliveryKeys below)
 * {p}:receiver:<name>:hold             string  why and until when a receiver is held (JSON, PX = the hold)
 * {p}:<kind>:<receiver>                any     a receiver kind's own state (alertmanager: hash of pushed alerts;
 *                                              pagerduty: hash of incidents folded into group alerts)
 * {p}:<queue>:...                      BullMQ  (prefix `{p}`)
 * ```
 *
 * Ids and facets are percent-encoded (`encodeURIComponent`), so an id holding `{`, `}` or `:` can
 * neither break the hash tag nor make two different (kind, id, facet) triples share a key.
 */

export const DEFAULT_PREFIX = 'fw';

/** `vehicle`, `robot`, or `fleet` for list-level snapshots (then `id` is the listed kind). */
export type SnapshotKind = EntityKind | 'fleet';

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

/**
 * The keys of one shard (one hash tag, so one Cluster slot): everything a commit touches besides
 * the snapshot itself. With `redis.shards` = 1 the one shard's tag is `{<prefix>}`, so the keys are
 * the ones a store without shards has always had.
 */
export interface ShardKeys {
  /** 0 … shards - 1. */
  readonly shard: number;
  /** The shard's hash tag: `{<prefix>}` with one shard, `{<prefix>.<i>-<salt>}` with more (shards.ts). */
  readonly tag: string;
  /** Outbox stream: events waiting for the relay. */
  readonly outbox: string;
  /** Where the relay parks outbox entries it cannot parse. */
  readonly outboxRejected: string;
  /** Event log stream (capped). */
  readonly events: string;
  /** The key of every snapshot a commit wrote, in commit order (capped): readers follow it. */
  readonly changes: string;
  /** Sorted set of known ids of a kind (members are raw ids, score = first seen ms). */
  index(kind: EntityKind): string;
  /** The store marker (its copy in this shard): lets every replica notice that the store was emptied (store-marker.ts). */
  readonly storeMarker: string;
  /** One incident record; ids are `[A-Za-z0-9._-]` only (incidents.ts), so they go in as they are. */
  incident(id: string): string;
  /** What `incident(id)` puts before the id: for the Lua scripts, which find ids in Redis. */
  readonly incidentPrefix: string;
  /** `<subject>#<key>` → id of the open incident. */
  readonly incidentsOpen: string;
  /** Closed incident ids, score = when they closed (epoch ms). */
  readonly incidentsClosed: string;
  /** Bumped by every change to an incident: readers reuse what they read while it stays. */
  readonly incidentsRevision: string;
  /** Ids of one subject's events not yet dispatched, in commit order (Guarantee 6). */
  order(subject: string): string;
}

/**
 * Every key of an installation. The per-entity keys live in the shard of their subject
 * (`shardOf`); the fields `StoreKeys` shares with `ShardKeys` are shard 0's, which is the only
 * shard, under `{<prefix>}`, when `shards` is 1. Everything else (`upstreamWindow`, `healthCheck`,
 * sessions, `controlMarker`, and notifyKeys / deliveryKeys / BullMQ) stays under `{<prefix>}`.
 */
export interface StoreKeys extends ShardKeys {
  readonly prefix: string;
  /** How many shards the per-entity keys are spread over (`redis.shards`, 1 … 256). */
  readonly shards: number;
  /** `{<prefix>}`: the tag of every key that is not per entity. */
  readonly controlTag: string;
  /** The keys of shard `shard` (0 … shards - 1). */
  shardKeys(shard: number): ShardKeys;
  /** Every shard's keys, in shard order. */
  readonly allShards: readonly ShardKeys[];
  /** The shard of a subject (`vehicle/veh-0003`, `upstream/fleet`): FNV-1a mod shards. */
  shardOf(subject: string): number;
  /**
   * The subject whose shard holds a snapshot: `<kind>/<id>` for an entity, `<id>/<facet>` for a
   * `fleet` ref (`upstream/fleet`, `receiver/ops`, `vehicle/membership`): the subject its events carry.
   */
  subjectOf(kind: SnapshotKind, id: string, facet: string): string;
  /**
   * A snapshot's key, in its subject's shard unless `shard` says which (a kind's membership list
   * is kept per shard: each shard's part in that shard).
   */
  snapshot(kind: SnapshotKind, id: string, facet: string, shard?: number): string;
  /** The part of a kind's membership list in `shard` (default 0): `{s}:snap:fleet:<kind>:membership`. */
  membership(kind: EntityKind, shard?: number): string;
  /** The kind, id and facet of a key `snapshot` made; undefined for any other key. */
  snapshotOf(key: string): { kind: string; id: string; facet: string } | undefined;
  pollLease(kind: SnapshotKind, id: string, scope: string): string;
  /** Request counts of one upstream (`token`, `fleet`, `robots`) in one counting window. */
  upstreamWindow(name: string, window: number): string;
  /**
   * The control marker, `{<prefix>}:store:marker`: the installation's own marker, which records
   * the shard count. With one shard it is also that shard's marker copy.
   */
  readonly controlMarker: string;
  /** What the Redis health check writes (`SET … PX`) to see that Redis takes writes (lib/redis-health.ts). */
  readonly healthCheck: string;
  /**
   * One API login session, by the SHA-256 (hex) of its id: the key does not reveal the cookie, so a
   * Redis dump or `MONITOR` gives no session away.
   */
  session(idDigest: string): string;
  /** The live sessions of one token (by name): members are `session`'s digests, scores their expiry. */
  sessionsOf(tokenName: string): string;
}

function shardKeysOf(shard: number, tag: string): ShardKeys {
  return {
    shard,
    tag,
    outbox: `${tag}:outbox`,
    outboxRejected: `${tag}:outbox:rejected`,
    events: `${tag}:events`,
    changes: `${tag}:changes`,
    index: (kind) => `${tag}:index:${encodeSegment(kind)}`,
    storeMarker: `${tag}:store:marker`,
    incident: (id) => `${tag}:incident:${encodeSegment(id)}`,
    incidentPrefix: `${tag}:incident:`,
    incidentsOpen: `${tag}:incidents:open`,
    incidentsClosed: `${tag}:incidents:closed`,
    incidentsRevision: `${tag}:incidents:rev`,
    order: (subject) => `${tag}:order:${encodeSegment(subject)}`,
  };
}

/** The key layout of `prefix` with its per-entity keys spread over `shards` shards (default 1). */
export function storeKeys(prefix: string = DEFAULT_PREFIX, shards = 1): StoreKeys {
  const tag = hashTag(prefix);
  const allShards = shardTags(prefix, shards).map((shardTag, shard) => shardKeysOf(shard, shardTag));
  const shardKeys = (index: number): ShardKeys => {
    const keys = allShards[index];
    if (!keys) throw new RangeError(`no shard ${index}: expected 0 to ${shards - 1}`);
    return keys;
  };
  const shardOf = (subject: string): number => subjectShard(subject, shards);
  const subjectOf = (kind: SnapshotKind, id: string, facet: string): string =>
    kind === 'fleet' ? `${id}/${facet}` : `${kind}/${id}`;
  const tagOf = (kind: SnapshotKind, id: string, facet: string, shard?: number): string =>
    shard !== undefined
      ? shardKeys(shard).tag
      : shards === 1
        ? tag
        : shardKeys(shardOf(subjectOf(kind, id, facet))).tag;
  const snapshot = (kind: SnapshotKind, id: string, facet: string, shard?: number): string =>
    `${tagOf(kind, id, facet, shard)}:snap:${encodeSegment(kind)}:${encodeSegment(id)}:${encodeSegment(facet)}`;
  return {
    ...shardKeys(0),
    prefix,
    shards,
    controlTag: tag,
    shardKeys,
    allShards,
    shardOf,
    subjectOf,
    snapshot,
    membership: (kind, shard = 0) => snapshot('fleet', kind, 'membership', shard),
    snapshotOf: (key) => {
      // Segments are percent-encoded, so the three after the tag's `:snap:` hold no `:`.
      const at = key.indexOf('}:snap:');
      if (at < 0) return undefined;
      const parts = key.slice(at + '}:snap:'.length).split(':');
      if (parts.length !== 3) return undefined;
      const [kind, id, facet] = parts.map(decodeSegment) as [string, string, string];
      return { kind, id, facet };
    },
    // An entity's leases follow the entity (`<kind>/<id>`), whatever the scope.
    pollLease: (kind, id, scope) =>
      `${tagOf(kind, id, scope)}:lease:poll:${encodeSegment(kind)}:${encodeSegment(id)}:${encodeSegment(scope)}`,
    upstreamWindow: (name, window) => `${tag}:upstream:window:${encodeSegment(name)}:${window}`,
    controlMarker: `${tag}:store:marker`,
    healthCheck: `${tag}:health`,
    session: (idDigest) => `${tag}:session:${encodeSegment(idDigest)}`,
    sessionsOf: (tokenName) => `${tag}:sessions:${encodeSegment(tokenName)}`,
  };
}

/**
 * Redis keys of the notification step, under the same `{<prefix>}` hash tag as every other key
 * (one Cluster slot, so one Lua call may touch a group, the wake set and subject sets together):
 *
 * ```
 * {p}:notify:group:<groupKey>     hash    one aggregation group: `v` (version token), `h` (the record's
 *                                         JSON without the parts below), `i:<incident>` (each open
 *                                         incident's JSON); `s` (the whole record) in groups written before
 * {p}:notify:group:<groupKey>:pending  list  the group's pending events' JSON, oldest first
 * {p}:notify:group:<groupKey>:closing  list  ids of its pending resolutions of announced incidents
 * {p}:notify:group:<groupKey>:recent   list  ids of the events it took lately (groups.ts)
 * {p}:notify:wake                 zset    group keys, score = epoch ms the flusher should look next
 * {p}:notify:subject:<subject>    set     group keys holding an open incident of that subject
 * {p}:silences                    hash    silence id → Silence JSON
 * {p}:notify:firing               hash    <subject>#<incident key> → the incident, firing or just resolved
 * {p}:notify:firing:rev           string  `<base>:<sequence>`, one more at every change of the hash above
 * {p}:notify:firing:log           list    the fields each change changed (JSON array), the newest last
 * {p}:notify:muted                hash    event id → why it was kept out of notifications
 * {p}:notify:muted:order          zset    the same event ids by when (caps the hash)
 * ```
 *
 * Group keys are `[A-Za-z0-9._=,~-]` only (routing/labels.ts) and go into keys as they are (any
 * other key is percent-encoded); subjects are percent-encoded like every other key segment.
 */
const SAFE_GROUP_KEY = /^[A-Za-z0-9._=,~-]+$/;

function groupKeyOf(tag: string, groupKey: string): string {
  return `${tag}:notify:group:${SAFE_GROUP_KEY.test(groupKey) ? groupKey : encodeSegment(groupKey)}`;
}

export interface NotifyKeys {
  readonly tag: string;
  readonly wake: string;
  readonly silences: string;
  /** Incidents as the notification step saw them fire and resolve: inhibition's sources. */
  readonly firing: string;
  /** Replaced at every change of `firing`: a reader that saw it unchanged need not read `firing`. */
  readonly firingRevision: string;
  /** The fields each change of `firing` changed, the latest 1,000 changes: readers read only those. */
  readonly firingLog: string;
  /** Why each muted event was kept out of notifications, and its capping order. */
  readonly muted: string;
  readonly mutedOrder: string;
  group(groupKey: string): string;
  /** One of the lists beside a group's hash (group-store.ts `LISTS`). */
  groupList(groupKey: string, list: 'pending' | 'closing' | 'recent'): string;
  subject(subject: string): string;
}

export function notifyKeys(prefix: string = DEFAULT_PREFIX): NotifyKeys {
  const tag = hashTag(prefix);
  return {
    tag,
    wake: `${tag}:notify:wake`,
    silences: `${tag}:silences`,
    firing: `${tag}:notify:firing`,
    firingRevision: `${tag}:notify:firing:rev`,
    firingLog: `${tag}:notify:firing:log`,
    muted: `${tag}:notify:muted`,
    mutedOrder: `${tag}:notify:muted:order`,
    group: (groupKey) => groupKeyOf(tag, groupKey),
    groupList: (groupKey, list) => `${groupKeyOf(tag, groupKey)}:${list}`,
    subject: (subject) => `${tag}:notify:subject:${encodeSegment(subject)}`,
  };
}

/**
 * Redis keys of delivery (next to BullMQ's own `{p}:notify-<receiver>:…`), under the same
 * `{<prefix>}` hash tag as every other fleetwatch key:
 *
 * ```
 * {p}:delivered:<receiver>:<notification id>   string  delivered marker (epoch ms), EX 1 day
 * {p}:receiver:<name>:disabled                 hash    reason, kind, at, episode, status
 * {p}:<kind>:<receiver>                        any     a receiver kind's own state (NotifierDeps.redis)
 * ```
 */
export interface DeliveryKeys {
  delivered(receiver: string, notificationId: string): string;
  receiverDisabled(receiver: string): string;
  receiverHold(receiver: string): string;
  /**
   * BullMQ's rate-limit key of the receiver's `notify-<receiver>` queue (`Queue.keys.limiter`):
   * while it holds a count at or above the limiter's maximum, no worker of any replica takes a job.
   */
  receiverLimiter(receiver: string): string;
  /** The one key a receiver's notifier may keep state under (`alertmanager`: the alerts it re-sends). */
  receiverState(kind: string, receiver: string): string;
}

export function deliveryKeys(prefix: string): DeliveryKeys {
  const tag = hashTag(prefix);
  return {
    delivered: (receiver, id) => `${tag}:delivered:${encodeSegment(receiver)}:${encodeSegment(id)}`,
    receiverDisabled: (receiver) => `${tag}:receiver:${encodeSegment(receiver)}:disabled`,
    receiverHold: (receiver) => `${tag}:receiver:${encodeSegment(receiver)}:hold`,
    // Receiver names are letters, digits, _ and - (the config checks it): the queue name as BullMQ writes it.
    receiverLimiter: (receiver) => `${tag}:notify-${encodeSegment(receiver)}:limiter`,
    receiverState: (kind, receiver) => `${tag}:${encodeSegment(kind)}:${encodeSegment(receiver)}`,
  };
}
