/**
 * Arrays made by appending to another, remembered as such: a reader can then tell that one array
 * begins with every item of another without comparing them all. An aggregation group's pending
 * events grow by one per event; comparing thousands per event to find the one appended made a
 * storm into one group quadratic.
 *
 * Arrays appended one to the next form a line: each is a prefix of the line's latest (its tip).
 * Appending to the tip extends the line; appending to an older array (a retried change starts
 * from an older version) starts a new line that remembers where it left its parent. An array
 * carries its line in a hidden property (not enumerable, so JSON and equality ignore it), and a
 * line holds no array: nothing old is kept alive, and no weak references are needed (a weak
 * reference per event cost more in garbage collection than the comparison it saved).
 */

interface Line {
  /** Length of the line's latest array. */
  tip: number;
  /** How many leading items of the line are deep-frozen (`frozenLength`). */
  frozen: number;
  /** The line this one left, and how many of its items it shares. */
  parent?: { line: Line; length: number };
}

const LINE: unique symbol = Symbol('appended.line');

type Marked = readonly unknown[] & { [LINE]?: Line };

/** How many lines back `startsWith` looks before it compares items instead. */
const MAX_HOPS = 64;

function lineOf(list: readonly unknown[]): Line | undefined {
  return (list as Marked)[LINE];
}

/** Arrays `appended` made inside the current `extendingInPlace` run (undefined outside one). */
let owned: Set<readonly unknown[]> | undefined;

/**
 * Runs `run` (synchronously) with one exception to "a new array": an array `appended` made inside
 * this run, still the latest of its line and not frozen, is extended in place. The aggregation
 * group store runs a batch of changes to one group this way (one write for them all), so a storm's
 * thousands of pending events are copied once per write, not once per event: copying them per
 * event made a storm of 50,000 into one group quadratic (70 s of CPU). Only arrays made inside the
 * run qualify, and those the caller hands over (`adopted`: arrays it owns and nobody else holds),
 * so nothing else changes; the caller must not keep an array of one step's result once it hands
 * that result to the next step.
 */
export function extendingInPlace<R>(run: () => R, adopted: Iterable<readonly unknown[]> = []): R {
  if (owned !== undefined) return run();
  owned = new Set(adopted);
  try {
    return run();
  } finally {
    owned = undefined;
  }
}

/** A new array: `list`'s items, then `items`; remembered as made from `list` (see `extendingInPlace`). */
export function appended<T>(list: readonly T[], ...items: T[]): T[] {
  const line = lineOf(list);
  if (owned?.has(list) && line !== undefined && line.tip === list.length && !Object.isFrozen(list)) {
    const extended = list as T[];
    for (const item of items) extended.push(item);
    line.tip = extended.length;
    return extended;
  }
  const next = [...list, ...items];
  let mark: Line;
  if (line !== undefined && line.tip === list.length) {
    line.tip = next.length;
    mark = line;
  } else {
    mark = {
      tip: next.length,
      frozen: line === undefined ? 0 : Math.min(line.frozen, list.length),
      ...(line === undefined ? {} : { parent: { line, length: list.length } }),
    };
  }
  Object.defineProperty(next, LINE, { value: mark });
  owned?.add(next);
  return next;
}

/**
 * True when `list` begins with the first `length` items of `prefix` (all of them by default), the
 * same objects in the same order.
 */
export function startsWith(
  list: readonly unknown[],
  prefix: readonly unknown[],
  length: number = prefix.length,
): boolean {
  if (length > list.length || length > prefix.length) return false;
  if (list === prefix) return true;
  const target = lineOf(prefix);
  if (target !== undefined) {
    let line = lineOf(list);
    let shared = list.length;
    for (let hops = 0; line !== undefined && hops < MAX_HOPS; hops += 1) {
      if (line === target) return length <= shared;
      if (line.parent === undefined) break;
      shared = Math.min(shared, line.parent.length);
      line = line.parent.line;
    }
  }
  for (let index = 0; index < length; index += 1) if (list[index] !== prefix[index]) return false;
  return true;
}

/** How many leading items of `list` are known to be deep-frozen (`noteFrozen`). */
export function frozenLength(list: readonly unknown[]): number {
  return Math.min(lineOf(list)?.frozen ?? 0, list.length);
}

/**
 * Records that every item of `list` is deep-frozen now. An array not made by `appended` (a copy, a
 * filter) starts a line of its own here, unless it is frozen itself (then nothing needs noting).
 */
export function noteFrozen(list: readonly unknown[]): void {
  const line = lineOf(list);
  if (line !== undefined) line.frozen = Math.max(line.frozen, list.length);
  else if (Object.isExtensible(list)) {
    const own: Line = { tip: list.length, frozen: list.length };
    Object.defineProperty(list, LINE, { value: own });
  }
}
