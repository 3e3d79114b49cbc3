import { randomBytes } from 'node:crypto';
import { draft, EVENT } from '../../events/catalogue.js';
import type { FleetEvent } from '../../events/types.js';
import type { RedisClient } from '../../lib/redis-connection.js';
import { DEFAULT_PREFIX, type DeliveryKeys, deliveryKeys } from '../../store/keys.js';
import { type LuaScript, runScript } from '../../store/scripts.js';
import type { SnapshotRef, SnapshotStore } from '../../store/snapshot-store.js';

/**
 * Receivers switched off because they answered that they are gone for good (webhook 410, Slack
 * `channel_is_archived`): `{p}:receiver:<name>:disabled`, a hash of `reason`, `kind`, `at` (ISO
 * 8601), `episode` (a random id of this disabling) and `status` (the HTTP status, when there was one).
 * While it exists the receiver's delivery worker sends nothing: each notification goes straight to
 * the dead letters with `receiver disabled: <reason>`. `fleetwatch receiver enable <name>` deletes it.
 *
 * Each disabling raises exactly one `monitor.receiver.disabled`, however many replicas see the 410
 * and wherever one of them is killed: the event is committed through the snapshot store on the
 * `fleet` ref `receiver/<name>` (`{p}:snap:fleet:receiver:<name>`), whose state remembers the
 * episode it reported. `report` commits only when the stored episode differs, with the version it
 * read, so of two replicas racing one commits and the other finds the episode already reported.
 * Anyone who finds the receiver disabled calls `report` again, so a replica killed between the
 * switch and the event leaves the event to the next notification.
 */

export interface ReceiverDisabled {
  reason: string;
  kind: string;
  /** ISO 8601 time it was disabled. */
  at: string;
  /** Identifies this disabling: each one is reported once. */
  episode: string;
  status?: number;
}

export interface DisableRequest {
  kind: string;
  /** Already free of secrets. */
  reason: string;
  status?: number;
}

/** The snapshot that records which disabling of `name` has been reported. */
export function receiverRef(name: string): SnapshotRef {
  return { kind: 'fleet', id: 'receiver', facet: name };
}

const DISABLE_SCRIPT: LuaScript = {
  name: 'fleetwatchDisableReceiver',
  numberOfKeys: 1,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('HGETALL', KEYS[1])}
end
redis.call('HSET', KEYS[1], 'reason', ARGV[1], 'kind', ARGV[2], 'at', ARGV[3], 'episode', ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'status', ARGV[5]) end
return {1, redis.call('HGETALL', KEYS[1])}
`,
};

const REPORT_TRIES = 5;

export interface DisabledReceiversOptions {
  redis: RedisClient;
  prefix?: string;
  /** Where `monitor.receiver.disabled` is committed; needed by `report` only. */
  store?: SnapshotStore;
  now?: () => number;
}

export class DisabledReceivers {
  readonly #redis: RedisClient;
  readonly #keys: DeliveryKeys;
  readonly #store: SnapshotStore | undefined;
  readonly #now: () => number;

  constructor(options: DisabledReceiversOptions) {
    this.#redis = options.redis;
    this.#keys = deliveryKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#store = options.store;
    this.#now = options.now ?? Date.now;
  }

  /** Why the receiver is disabled, or `undefined` when it is not. */
  async status(name: string): Promise<ReceiverDisabled | undefined> {
    return parseDisabled(await this.#redis.hgetall(this.#keys.receiverDisabled(name)));
  }

  /**
   * Disables the receiver unless it already is; `first` tells whether this call did it. Either
   * way the stored disabling comes back (the earlier one when it was already disabled).
   */
  async disable(
    name: string,
    request: DisableRequest,
  ): Promise<{ first: boolean; disabled: ReceiverDisabled }> {
    const reply = (await runScript(
      this.#redis,
      DISABLE_SCRIPT,
      [this.#keys.receiverDisabled(name)],
      [
        request.reason,
        request.kind,
        new Date(this.#now()).toISOString(),
        randomBytes(8).toString('hex'),
        request.status === undefined ? '' : String(request.status),
      ],
    )) as [number, string[]];
    const fields: Record<string, string> = {};
    const flat = reply[1] ?? [];
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
    const disabled = parseDisabled(fields);
    if (!disabled) throw new Error(`receiver ${name}: the disabled flag could not be read back`);
    return { first: reply[0] === 1, disabled };
  }

  /** Enables the receiver again; resolves with the disabling it cleared, if there was one. */
  async enable(name: string): Promise<ReceiverDisabled | undefined> {
    const key = this.#keys.receiverDisabled(name);
    const replies = await this.#redis.multi().hgetall(key).del(key).exec();
    const [error, fields] = replies?.[0] ?? [new Error('no reply'), null];
    if (error) throw error;
    return parseDisabled(fields as Record<string, string>);
  }

  /**
   * Raises `monitor.receiver.disabled` for this disabling unless it has been raised already.
   * Resolves with the event when this call committed it.
   */
  async report(name: string, disabled: ReceiverDisabled): Promise<FleetEvent | undefined> {
    const store = this.#store;
    if (!store) throw new Error('no snapshot store to record monitor.receiver.disabled in');
    const ref = receiverRef(name);
    for (let attempt = 0; attempt < REPORT_TRIES; attempt += 1) {
      const [record] = await store.read([ref]);
      const reported = (record?.state as { episode?: unknown } | undefined)?.episode;
      if (reported === disabled.episode) return undefined;
      const result = await store.commit(
        ref,
        record?.version ?? 0,
        {
          state: { disabled: true, ...disabled },
          // Never older than the stored reading, so a replica with a slower clock still commits.
          observedAt: later(disabled.at, record?.observedAt),
        },
        [draft(EVENT.receiverDisabled, { receiver: name, kind: disabled.kind, reason: disabled.reason })],
      );
      if (result.committed) return result.events[0];
    }
    throw new Error(
      `receiver ${name}: could not record monitor.receiver.disabled (too many writers at once)`,
    );
  }
}

function later(a: string, b: string | undefined): string {
  if (b === undefined) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

function parseDisabled(fields: Record<string, string> | null | undefined): ReceiverDisabled | undefined {
  if (!fields || fields.episode === undefined) return undefined;
  const status = Number(fields.status);
  return {
    reason: fields.reason ?? '',
    kind: fields.kind ?? '',
    at: fields.at ?? new Date(0).toISOString(),
    episode: fields.episode,
    ...(fields.status !== undefined && Number.isInteger(status) ? { status } : {}),
  };
}
