import { hashPages } from '../../../lib/hash-scan.js';
import type { RedisClient } from '../../../lib/redis-connection.js';
import { slices } from '../../../lib/slices.js';
import { type LuaScript, runScript } from '../../../store/scripts.js';
import type { ReceiverRedis } from '../../notifier.js';
import { parseStoredAlert, type StoredAlert } from './alerts.js';

/**
 * The alerts one Alertmanager receiver has pushed, in its own Redis hash
 * (`{p}:alertmanager:<receiver>`): field = incident id (`vehicle/veh-0003#vpn`), value = the
 * stored alert as JSON. It holds one entry per incident of this receiver that is firing, and each
 * resolved one for a resolve window after its resolution. Every replica reads the same hash: the
 * delivery worker (one at a time per receiver) writes it, every replica's re-send loop reads it.
 */

/**
 * Drops a resolved alert whose time is over, unless it changed since it was read (a delivery may
 * have fired the incident again meanwhile).
 */
const DROP_IF_UNCHANGED: LuaScript = {
  name: 'fleetwatchAlertmanagerDrop',
  numberOfKeys: 1,
  lua: `if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`,
};

/** `*`, `?`, `[`, `]` and `\\` taken literally in an HSCAN MATCH pattern. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}

export interface StoredEntry {
  id: string;
  alert: StoredAlert;
  /** The JSON as read, for `dropIfUnchanged`. */
  text: string;
}

/** Up to this many subjects, `load` scans the hash once per subject (by pattern); beyond, once. */
export const SUBJECT_SCANS = 16;

/** Whether the incident id `<subject>#<key>` is of one of `subjects` (a subject may hold `#`). */
function ofSubjects(id: string, subjects: ReadonlySet<string>): boolean {
  for (let at = id.indexOf('#'); at >= 0; at = id.indexOf('#', at + 1)) {
    if (subjects.has(id.slice(0, at))) return true;
  }
  return false;
}

export class AlertStore {
  readonly #redis: RedisClient;
  readonly #key: string;

  constructor(redis: ReceiverRedis) {
    this.#redis = redis.connection;
    this.#key = redis.key;
  }

  /** The stored alerts of these incidents, and of every incident of these subjects. */
  async load(ids: readonly string[], subjects: readonly string[]): Promise<Map<string, StoredAlert>> {
    const found = new Map<string, StoredAlert>();
    for (const slice of slices(ids)) {
      const values = await this.#redis.hmget(this.#key, ...slice);
      slice.forEach((id, index) => {
        const alert = parseStoredAlert(values[index]);
        if (alert) found.set(id, alert);
      });
    }
    if (subjects.length <= SUBJECT_SCANS) {
      for (const subject of subjects) {
        for await (const page of this.#pages(`${globLiteral(subject)}#*`)) {
          for (const entry of page) found.set(entry.id, entry.alert);
        }
      }
      return found;
    }
    // Many subjects (a mass removal): one pass over the hash instead of one per subject, each of
    // which walks the whole hash too.
    const wanted = new Set(subjects);
    for await (const page of this.#pages(undefined)) {
      for (const entry of page) if (ofSubjects(entry.id, wanted)) found.set(entry.id, entry.alert);
    }
    return found;
  }

  async save(writes: ReadonlyMap<string, StoredAlert>): Promise<void> {
    for (const slice of slices([...writes])) {
      await this.#redis.hset(this.#key, ...slice.flatMap(([id, alert]) => [id, JSON.stringify(alert)]));
    }
  }

  /** Every stored alert, a page (at most a few hundred) at a time. */
  entries(): AsyncGenerator<StoredEntry[]> {
    return this.#pages(undefined);
  }

  async dropIfUnchanged(entry: StoredEntry): Promise<boolean> {
    const dropped = await runScript(this.#redis, DROP_IF_UNCHANGED, [this.#key], [entry.id, entry.text]);
    return dropped === 1;
  }

  async *#pages(match: string | undefined): AsyncGenerator<StoredEntry[]> {
    for await (const fields of hashPages(this.#redis, this.#key, match === undefined ? {} : { match })) {
      const page: StoredEntry[] = [];
      for (const [id, text] of fields) {
        const alert = parseStoredAlert(text);
        if (alert) page.push({ id, alert, text });
      }
      if (page.length > 0) yield page;
    }
  }
}
