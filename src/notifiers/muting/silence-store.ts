import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../lib/redis-connection.js';
import { slices } from '../../lib/slices.js';
import { type NotifyKeys, notifyKeys } from '../../store/keys.js';
import { createSilence, expireSilence, type Silence, silenceState } from './silences.js';

/**
 * Silences in Redis: `{p}:silences` is a hash of silence id → `Silence` JSON, shared by every
 * replica and the CLI. Validation and evaluation are the routing module's (`createSilence`,
 * `silenceState`, `silencedBy`); this class only stores. Expired silences stay listed
 * (`list({ all: true })`) for `retentionMs` after they end, then `add` prunes them.
 */

export type AddSilenceResult = { ok: true; silence: Silence } | { ok: false; problems: string[] };

export type ExpireSilenceResult =
  | { found: false }
  | { found: true; silence: Silence; alreadyExpired: boolean };

export interface SilenceStoreOptions {
  /** Any connection; not closed by the store. */
  redis: RedisClient;
  prefix?: string;
  /** How long an expired silence stays listed; 7 days by default. */
  retentionMs?: number;
  /** Silence ids (tests); `sil_<12 hex digits>` by default. */
  newId?: () => string;
}

export function newSilenceId(): string {
  return `sil_${randomBytes(6).toString('hex')}`;
}

function parse(json: string): Silence | undefined {
  try {
    const value = JSON.parse(json) as Partial<Silence>;
    if (
      typeof value.id !== 'string' ||
      typeof value.startsAt !== 'string' ||
      typeof value.endsAt !== 'string' ||
      value.matchers === null ||
      typeof value.matchers !== 'object'
    ) {
      return undefined;
    }
    return value as Silence;
  } catch {
    return undefined;
  }
}

function byStart(a: Silence, b: Silence): number {
  return Date.parse(a.startsAt) - Date.parse(b.startsAt) || a.id.localeCompare(b.id);
}

export class SilenceStore {
  readonly keys: NotifyKeys;
  readonly #redis: RedisClient;
  readonly #retentionMs: number;
  readonly #newId: () => string;

  constructor(options: SilenceStoreOptions) {
    this.#redis = options.redis;
    this.keys = notifyKeys(options.prefix);
    this.#retentionMs = options.retentionMs ?? 7 * 86_400_000;
    this.#newId = options.newId ?? newSilenceId;
  }

  /**
   * Validates `input` (`silenceInputSchema`: matchers, duration or endsAt, optional startsAt,
   * createdBy, comment) and stores the silence. `author` is used when the input names no creator.
   */
  async add(input: unknown, now: number, author?: string): Promise<AddSilenceResult> {
    const withAuthor =
      author !== undefined && input !== null && typeof input === 'object' && !('createdBy' in input)
        ? { ...input, createdBy: author }
        : input;
    const created = createSilence(withAuthor, now, this.#newId());
    if (!created.ok) return created;
    await this.#redis.hset(this.keys.silences, created.silence.id, JSON.stringify(created.silence));
    await this.prune(now);
    return created;
  }

  async get(id: string): Promise<Silence | undefined> {
    const json = await this.#redis.hget(this.keys.silences, id);
    return json === null ? undefined : parse(json);
  }

  /** Pending and active silences (with `all`, expired ones too), by start time. */
  async list(options: { all?: boolean; now?: number } = {}): Promise<Silence[]> {
    const now = options.now ?? Date.now();
    const all = await this.#all();
    return (options.all ? all : all.filter((silence) => silenceState(silence, now) !== 'expired')).sort(
      byStart,
    );
  }

  /** The silences active at `now`. */
  async active(now: number): Promise<Silence[]> {
    return (await this.#all()).filter((silence) => silenceState(silence, now) === 'active');
  }

  /** Ends a silence now (a pending one never starts). */
  async expire(id: string, now: number): Promise<ExpireSilenceResult> {
    const silence = await this.get(id);
    if (!silence) return { found: false };
    if (silenceState(silence, now) === 'expired') return { found: true, silence, alreadyExpired: true };
    const expired = expireSilence(silence, now);
    await this.#redis.hset(this.keys.silences, id, JSON.stringify(expired));
    return { found: true, silence: expired, alreadyExpired: false };
  }

  /** Deletes silences that ended more than `retentionMs` ago; returns how many. */
  async prune(now: number): Promise<number> {
    const old = (await this.#all())
      .filter((silence) => Date.parse(silence.endsAt) + this.#retentionMs <= now)
      .map((silence) => silence.id);
    let deleted = 0;
    for (const slice of slices(old)) deleted += await this.#redis.hdel(this.keys.silences, ...slice);
    return deleted;
  }

  async #all(): Promise<Silence[]> {
    const entries = await this.#redis.hgetall(this.keys.silences);
    const silences: Silence[] = [];
    for (const json of Object.values(entries)) {
      const silence = parse(json);
      if (silence) silences.push(silence);
    }
    return silences;
  }
}
