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
type ScriptFn<R> = (...args: ScriptArg[]) => R;

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

/** Runs a defined script: `keys` then `args` (with the key count first when it is variable). */
export function runScript(
  redis: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<unknown> {
  defineScript(redis, script);
  const prefix = script.numberOfKeys === undefined ? [keys.length] : [];
  return lookup<Promise<unknown>>(redis, script.name).call(redis, ...prefix, ...keys, ...args);
}

/** Queues a defined script on a pipeline (define it on the pipeline's connection first). */
export function queueScript(
  pipeline: ChainableCommander,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): void {
  const prefix = script.numberOfKeys === undefined ? [keys.length] : [];
  lookup<unknown>(pipeline, script.name).call(pipeline, ...prefix, ...keys, ...args);
}
