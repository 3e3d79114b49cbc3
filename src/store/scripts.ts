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
