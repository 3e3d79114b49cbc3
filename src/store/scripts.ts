import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../lib/redis-connection.js';

/**
 * Lua scripts as ioredis custom commands: EVALSHA after the first call, transparent reload on
 * NOSCRIPT, and available on the connection's pipelines too. Invoked through these helpers so the
 * store does not need to augment ioredis' global command typings.
 */
export interface LuaScript {
  /** Command name on the connection; prefixed `fleetwatch` to avoid clashes. */
  name: string;
  lua: string;
  /** Fixed key count; omit for a variable one (then pass the count as the first argument). */
  numberOfKeys?: number;
}

type ScriptArg = string | number;

/**
 * Many values as one script argument, each on a line of its own (ended by a line break). A script
 * run per poll job (the poll leases, the touch) takes its keys this way instead of as KEYS: ioredis
 * encodes every argument on its own, and one argument instead of a job's 200 keys halved the
 * client's CPU of such a call (BENCHMARKS.md, *What changed for the targets*). The script still
 * declares one key of the batch as KEYS[1], so that a Cluster sends it to the batch's slot; every
 * packed key must share that slot (one shard, one hash tag: by-shard.ts), which Redis then lets
 * the script reach. No key holds a line break: the tag is checked and every segment
 * percent-encoded (keys.ts); a value packed beside keys must not hold one either.
 */
export function packLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * Lua: `lines(text)` iterates the lines `packLines` packed, empty ones included. A plain find (no
 * pattern) costs Redis about as much per key as KEYS does; `string.gmatch` half as much again.
 */
export const LINES_LUA = `
local find, sub = string.find, string.sub
local function lines(text)
  local from = 1
  return function()
    local to = find(text, '\\n', from, true)
    if not to then return nil end
    local line = sub(text, from, to - 1)
    from = to + 1
    return line
  end
end
`;

/** A custom command called with one array: ioredis flattens it into the command's arguments. */
type ScriptFn<R> = (args: ScriptArg[]) => R;

function lookup<R>(target: object, name: string): ScriptFn<R> {
  const fn = (target as Record<string, unknown>)[name];
  if (typeof fn !== 'function') throw new Error(`Lua command ${name} is not defined on this connection`);
  return fn as ScriptFn<R>;
}

/** Defines `script` on `redis` unless it already is. */
export function defineScript(redis: RedisClient, script: LuaScript): void {
  if (typeof (redis as unknown as Record<string, unknown>)[script.name] === 'function') return;
  redis.defineCommand(
    script.name,
    script.numberOfKeys === undefined
      ? { lua: script.lua }
      : { lua: script.lua, numberOfKeys: script.numberOfKeys },
  );
}

/** The key count when the script's is variable, the keys, then the arguments. */
function scriptArguments(
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): ScriptArg[] {
  return script.numberOfKeys === undefined ? [keys.length, ...keys, ...args] : [...keys, ...args];
}

/** Runs a defined script: `keys` then `args` (with the key count first when it is variable). */
export function runScript(
  redis: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<unknown> {
  defineScript(redis, script);
  // One array, not spread arguments: ioredis flattens it, and a script's arguments can outnumber
  // what a call takes (a storm's flush writes an incident field per incident).
  return lookup<Promise<unknown>>(redis, script.name).call(redis, scriptArguments(script, keys, args));
}

/** Queues a defined script on a pipeline (define it on the pipeline's connection first). */
export function queueScript(
  pipeline: ChainableCommander,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): void {
  lookup<unknown>(pipeline, script.name).call(pipeline, scriptArguments(script, keys, args));
}
