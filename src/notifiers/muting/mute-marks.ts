import { z } from 'zod';
import type { RedisClient } from '../../lib/redis-connection.js';
import { slices } from '../../lib/slices.js';
import { type NotifyKeys, notifyKeys } from '../../store/keys.js';
import { type LuaScript, runScript } from '../../store/scripts.js';
import type { Muted } from './muted.js';
import { decodeStored } from './stored-json.js';

/**
 * Why an event was kept out of notifications, by event id, for the event log's readers
 * (`/api/events`): silenced (by which silence), in maintenance (which window), inhibited (by which
 * rule and source incident). Written where the decision is made (the dispatcher, or the flusher
 * when the event is muted at flush); the first mark of an event stays (a later look at the same
 * event says nothing new). Bounded: the hash `{p}:notify:muted` keeps the newest `cap` marks, the
 * zset `{p}:notify:muted:order` (score = when) says which are oldest; both trimmed in the write.
 */

export interface MuteMark extends Muted {
  /** Epoch ms the event was kept out. */
  at: number;
}

export const DEFAULT_MUTE_MARKS_CAP = 100_000;

/** KEYS: hash, order. ARGV: event id, mark JSON, at, cap. Returns 1 when the mark is new. */
const MARK_LUA = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #oldest, 2 do redis.call('HDEL', KEYS[1], oldest[i]) end
end
return 1
`;

const MARK: LuaScript = { name: 'fleetwatchMuteMark', lua: MARK_LUA, numberOfKeys: 2 };

const markSchema = z.object({
  reason: z.enum(['silenced', 'maintenance', 'inhibited']),
  by: z.string(),
  source: z.object({ type: z.string(), subject: z.string() }).optional(),
  at: z.number(),
});

export interface MuteMarksOptions {
  /** Any connection; not closed here. */
  redis: RedisClient;
  prefix?: string;
  /** Marks kept; 100,000 by default (as many as the event log keeps by default). */
  cap?: number;
}

export class MuteMarks {
  readonly keys: NotifyKeys;
  readonly #redis: RedisClient;
  readonly #cap: number;

  constructor(options: MuteMarksOptions) {
    this.#redis = options.redis;
    this.keys = notifyKeys(options.prefix);
    this.#cap = Math.max(1, Math.floor(options.cap ?? DEFAULT_MUTE_MARKS_CAP));
  }

  /** Marks the event muted; true when it was not marked before. */
  async mark(eventId: string, muted: Muted, at: number): Promise<boolean> {
    const mark: MuteMark = { ...muted, at };
    const added = await runScript(
      this.#redis,
      MARK,
      [this.keys.muted, this.keys.mutedOrder],
      [eventId, JSON.stringify(mark), at, this.#cap],
    );
    return added === 1;
  }

  /** The marks of these events (absent: not muted, or marked too long ago). */
  async read(eventIds: readonly string[]): Promise<Map<string, MuteMark>> {
    const out = new Map<string, MuteMark>();
    for (const slice of slices(eventIds)) {
      const values = await this.#redis.hmget(this.keys.muted, ...slice);
      slice.forEach((id, i) => {
        const mark = decodeStored(markSchema, values[i]);
        if (mark) out.set(id, mark);
      });
    }
    return out;
  }
}
