import { ConfigError } from './load.js';
import type { Config } from './schema.js';

/**
 * What a configuration reload (SIGHUP, `POST /-/reload`) may change in a running daemon, and how
 * a new config differs from the one in force. Pure: the daemon's reloader (daemon/reload.ts) reads
 * the file, asks `planReload`, and hands the config it returns to the parts that take it live.
 *
 * Live sections are re-read by the parts that use them: the route tree, entity tags, maintenance
 * windows and inhibition rules (`notifications`), the receivers (a delivery worker each),
 * `console.url` (links in messages) and the detector thresholds (`detectors`, read at the start of
 * each poll job). Everything else is built into connections, queues, workers, timers and the HTTP
 * listener at start: a change there is reported as needing a restart and the value in force is
 * kept, while the live sections of the same file are applied (a reload is never all-or-nothing on
 * such keys; an invalid file, by contrast, changes nothing).
 */

/** The top-level sections a reload applies. Every other section needs a restart. */
export const LIVE_SECTIONS = [
  'notifications',
  'receivers',
  'detectors',
  'console',
] as const satisfies readonly (keyof Config)[];

type LiveSection = (typeof LIVE_SECTIONS)[number];

const LIVE = new Set<string>(LIVE_SECTIONS);

/** Receivers by name: added, removed, or the same name with other settings. */
export interface ReceiverChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** How `next` differs from the config in force; paths only, never values (they may be secrets). */
export interface ConfigDiff {
  /** Changed settings a reload applies, e.g. `notifications.route.receiver`, `receivers.ops`. */
  live: string[];
  /** Changed settings that need a restart, e.g. `redis.url`, `worker.concurrency`. */
  restart: string[];
  receivers: ReceiverChanges;
}

/** What a reload did, as the log, the metrics and `POST /-/reload` report it. */
export type ReloadResult =
  | {
      ok: true;
      /** `unchanged`: the file says what is in force (restart-only changes aside). */
      status: 'reloaded' | 'unchanged';
      changed: string[];
      receivers: ReceiverChanges;
      /** Settings that changed in the file but keep their value until a restart. */
      needsRestart: string[];
    }
  | {
      ok: false;
      /** `invalid`: the file cannot be used (unreadable, not YAML, schema); `failed`: applying it failed. */
      reason: 'invalid' | 'failed';
      /** One line each, as `fleetwatch config check` prints them (`<file>: <field>: <problem>`). */
      problems: string[];
    };

export interface ReloadPlan {
  diff: ConfigDiff;
  /** The config to run: `next`'s live sections over the sections in force. */
  config: Config;
}

/**
 * The diff and the config a reload would put in force. A live section that did not change stays
 * the same object, so a part can tell a change by identity.
 */
export function planReload(current: Config, next: Config): ReloadPlan {
  const diff = diffConfig(current, next);
  const config: Config = { ...current };
  for (const section of LIVE_SECTIONS) {
    if (!sameValue(current[section], next[section])) assign(config, next, section);
  }
  return { diff, config };
}

function assign<K extends LiveSection>(target: Config, source: Config, key: K): void {
  target[key] = source[key];
}

export function diffConfig(current: Config, next: Config): ConfigDiff {
  const live: string[] = [];
  const restart: string[] = [];
  const receivers = diffReceivers(current.receivers, next.receivers);
  const keys = new Set([...Object.keys(current), ...Object.keys(next)]);
  for (const key of [...keys].sort()) {
    if (key === 'receivers') {
      live.push(
        ...[...receivers.added, ...receivers.removed, ...receivers.changed]
          .sort()
          .map((name) => `receivers.${name}`),
      );
      continue;
    }
    const paths = changedPaths(
      (current as Record<string, unknown>)[key],
      (next as Record<string, unknown>)[key],
      key,
    );
    (LIVE.has(key) ? live : restart).push(...paths);
  }
  return { live, restart, receivers };
}

function diffReceivers(
  current: readonly { name: string }[],
  next: readonly { name: string }[],
): ReceiverChanges {
  const before = new Map(current.map((receiver) => [receiver.name, receiver]));
  const after = new Map(next.map((receiver) => [receiver.name, receiver]));
  return {
    added: [...after.keys()].filter((name) => !before.has(name)).sort(),
    removed: [...before.keys()].filter((name) => !after.has(name)).sort(),
    changed: [...after.keys()]
      .filter((name) => before.has(name) && !sameValue(before.get(name), after.get(name)))
      .sort(),
  };
}

/** Nesting beyond this is reported as one path (a config is about ten levels deep). */
const MAX_PATH_DEPTH = 8;

/**
 * The dotted paths of the leaves that differ; a list counts as one leaf (`http.tokens`,
 * `notifications.maintenance`). Iterative, bounded by `MAX_PATH_DEPTH`.
 */
export function changedPaths(before: unknown, after: unknown, root: string): string[] {
  const out: string[] = [];
  const pending: Array<[unknown, unknown, string, number]> = [[before, after, root, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [a, b, path, depth] = next;
    if (sameValue(a, b)) continue;
    if (isMapping(a) && isMapping(b) && depth < MAX_PATH_DEPTH) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
      for (const key of keys) pending.push([a[key], b[key], `${path}.${key}`, depth + 1]);
    } else {
      out.push(path);
    }
  }
  return out.sort();
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality of parsed config values (plain data); an absent key equals `undefined`. */
export function sameValue(a: unknown, b: unknown): boolean {
  const pending: Array<[unknown, unknown]> = [[a, b]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [x, y] = next;
    if (Object.is(x, y)) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) return false;
      x.forEach((item, index) => {
        pending.push([item, y[index]]);
      });
      continue;
    }
    const left = x as Record<string, unknown>;
    const right = y as Record<string, unknown>;
    for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
      pending.push([left[key], right[key]]);
    }
  }
  return true;
}

/** The lines a refused config is reported with: those `fleetwatch config check` prints. */
export function configProblems(error: unknown): string[] {
  if (error instanceof ConfigError) return error.problems.map((problem) => `${error.source}: ${problem}`);
  return [error instanceof Error ? error.message : String(error)];
}
