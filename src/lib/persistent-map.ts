/**
 * An immutable map from strings to values that shares structure between versions (a hash array
 * mapped trie, as Clojure's and Immutable.js' maps are): `set` and `delete` return a new map that
 * copies only the path to the changed entry, O(log n), instead of the whole map. An aggregation
 * group holding thousands of open incidents changes one per event; copying them all per event
 * made a storm into one group quadratic.
 *
 * Two versions of one map share every node the change did not touch, so `diffMaps` finds what
 * changed between them by skipping shared nodes: O(changes × log n), not a walk of both.
 *
 * The trie is canonical: a given set of keys has one shape whatever the order of the changes that
 * made it (a branch left with a single entry folds into its parent), so iteration order is the
 * keys' hash order, the same on every replica. Nodes and the map are plain objects, so
 * `Object.freeze` and a deep freeze reach them; nothing here modifies a node once it is returned.
 */

const BITS = 5;
const MASK = (1 << BITS) - 1;

class Leaf<V> {
  constructor(
    readonly key: string,
    readonly hash: number,
    readonly value: V,
  ) {}
}

/** Entries whose keys have the same 32-bit hash. */
class Bucket<V> {
  constructor(
    readonly hash: number,
    readonly leaves: readonly Leaf<V>[],
  ) {}
}

/** A trie level: `bitmap` says which of the 32 slots are taken; `children` holds them in order. */
class Branch<V> {
  constructor(
    readonly bitmap: number,
    readonly children: readonly Child<V>[],
  ) {}
}

type Child<V> = Leaf<V> | Bucket<V> | Branch<V>;

/** FNV-1a over the UTF-16 code units. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index += 1) {
    hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
  }
  return hash >>> 0;
}

function popcount(bits: number): number {
  let value = bits - ((bits >>> 1) & 0x55555555);
  value = (value & 0x33333333) + ((value >>> 2) & 0x33333333);
  return (Math.imul((value + (value >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

function slotOf(hash: number, shift: number): number {
  return 1 << ((hash >>> shift) & MASK);
}

function indexOf(bitmap: number, slot: number): number {
  return popcount(bitmap & (slot - 1));
}

function replaced<T>(items: readonly T[], index: number, item: T): T[] {
  const copy = items.slice();
  copy[index] = item;
  return copy;
}

function inserted<T>(items: readonly T[], index: number, item: T): T[] {
  const copy = items.slice(0, index);
  copy.push(item);
  for (let at = index; at < items.length; at += 1) copy.push(items[at]!);
  return copy;
}

function removed<T>(items: readonly T[], index: number): T[] {
  const copy = items.slice(0, index);
  for (let at = index + 1; at < items.length; at += 1) copy.push(items[at]!);
  return copy;
}

/** A branch holding two entries of different hashes, split at the first level they differ. */
function split<V>(one: Leaf<V> | Bucket<V>, two: Leaf<V>, shift: number): Branch<V> {
  const slotOne = slotOf(one.hash, shift);
  const slotTwo = slotOf(two.hash, shift);
  if (slotOne === slotTwo) return new Branch(slotOne, [split(one, two, shift + BITS)]);
  // Unsigned: slot 31 is the sign bit.
  return new Branch(slotOne | slotTwo, slotOne >>> 0 < slotTwo >>> 0 ? [one, two] : [two, one]);
}

function setIn<V>(node: Child<V>, shift: number, leaf: Leaf<V>): Child<V> {
  if (node instanceof Branch) {
    const slot = slotOf(leaf.hash, shift);
    const index = indexOf(node.bitmap, slot);
    if ((node.bitmap & slot) === 0)
      return new Branch(node.bitmap | slot, inserted(node.children, index, leaf));
    const child = node.children[index]!;
    const next = setIn(child, shift + BITS, leaf);
    return next === child ? node : new Branch(node.bitmap, replaced(node.children, index, next));
  }
  if (node instanceof Leaf) {
    if (node.key === leaf.key) return node.value === leaf.value ? node : leaf;
    if (node.hash === leaf.hash) return new Bucket(leaf.hash, [node, leaf]);
    return split(node, leaf, shift);
  }
  if (node.hash !== leaf.hash) return split(node, leaf, shift);
  const at = node.leaves.findIndex((entry) => entry.key === leaf.key);
  if (at < 0) return new Bucket(node.hash, [...node.leaves, leaf]);
  return node.leaves[at]!.value === leaf.value
    ? node
    : new Bucket(node.hash, replaced(node.leaves, at, leaf));
}

/** The node without `key`: the same node when it has no such key, undefined when nothing is left. */
function deleteIn<V>(node: Child<V>, shift: number, key: string, hash: number): Child<V> | undefined {
  if (node instanceof Leaf) return node.key === key ? undefined : node;
  if (node instanceof Bucket) {
    const at = node.leaves.findIndex((entry) => entry.key === key);
    if (at < 0) return node;
    const rest = removed(node.leaves, at);
    return rest.length === 1 ? rest[0] : new Bucket(node.hash, rest);
  }
  const slot = slotOf(hash, shift);
  if ((node.bitmap & slot) === 0) return node;
  const index = indexOf(node.bitmap, slot);
  const child = node.children[index]!;
  const next = deleteIn(child, shift + BITS, key, hash);
  if (next === child) return node;
  if (next === undefined) {
    if (node.children.length === 1) return undefined;
    const rest = removed(node.children, index);
    // A branch left with one entry folds into its parent: the shape depends on the keys alone.
    if (rest.length === 1 && !(rest[0] instanceof Branch) && shift > 0) return rest[0];
    return new Branch(node.bitmap ^ slot, rest);
  }
  if (node.children.length === 1 && !(next instanceof Branch) && shift > 0) return next;
  return new Branch(node.bitmap, replaced(node.children, index, next));
}

function getIn<V>(root: Child<V> | undefined, key: string, hash: number): V | undefined {
  let node = root;
  let shift = 0;
  while (node !== undefined) {
    if (node instanceof Leaf) return node.key === key ? node.value : undefined;
    if (node instanceof Bucket) {
      if (node.hash !== hash) return undefined;
      for (const leaf of node.leaves) if (leaf.key === key) return leaf.value;
      return undefined;
    }
    const slot = slotOf(hash, shift);
    if ((node.bitmap & slot) === 0) return undefined;
    node = node.children[indexOf(node.bitmap, slot)];
    shift += BITS;
  }
  return undefined;
}

function eachIn<V>(node: Child<V> | undefined, visit: (value: V, key: string) => void): void {
  if (node === undefined) return;
  if (node instanceof Leaf) visit(node.value, node.key);
  else if (node instanceof Bucket) for (const leaf of node.leaves) visit(leaf.value, leaf.key);
  else for (const child of node.children) eachIn(child, visit);
}

function* entriesIn<V>(node: Child<V> | undefined): Generator<[string, V]> {
  if (node === undefined) return;
  if (node instanceof Leaf) yield [node.key, node.value];
  else if (node instanceof Bucket) for (const leaf of node.leaves) yield [leaf.key, leaf.value];
  else for (const child of node.children) yield* entriesIn(child);
}

/** Values are never undefined (absent and undefined would be one). */
export class PersistentMap<V extends NonNullable<unknown>> implements Iterable<[string, V]> {
  private constructor(
    /** Undefined when empty. */
    private readonly root: Child<V> | undefined,
    readonly size: number,
  ) {}

  static empty<V extends NonNullable<unknown>>(): PersistentMap<V> {
    return new PersistentMap<V>(undefined, 0);
  }

  static from<V extends NonNullable<unknown>>(entries: Iterable<readonly [string, V]>): PersistentMap<V> {
    let map = PersistentMap.empty<V>();
    for (const [key, value] of entries) map = map.set(key, value);
    return map;
  }

  get(key: string): V | undefined {
    return getIn(this.root, key, hashOf(key));
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** The map with `key` set to `value`; this map itself when it already holds that very value. */
  set(key: string, value: V): PersistentMap<V> {
    const leaf = new Leaf(key, hashOf(key), value);
    if (this.root === undefined) return new PersistentMap(new Branch(slotOf(leaf.hash, 0), [leaf]), 1);
    const root = setIn(this.root, 0, leaf);
    if (root === this.root) return this;
    const grew = getIn(this.root, key, leaf.hash) === undefined;
    return new PersistentMap(root, grew ? this.size + 1 : this.size);
  }

  /** The map without `key`; this map itself when it has no such key. */
  delete(key: string): PersistentMap<V> {
    if (this.root === undefined) return this;
    const root = deleteIn(this.root, 0, key, hashOf(key));
    if (root === this.root) return this;
    return root === undefined ? PersistentMap.empty() : new PersistentMap(root, this.size - 1);
  }

  /** Every entry, in the keys' hash order. */
  forEach(visit: (value: V, key: string) => void): void {
    eachIn(this.root, visit);
  }

  entries(): IterableIterator<[string, V]> {
    return entriesIn(this.root);
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return entriesIn(this.root);
  }

  *keys(): IterableIterator<string> {
    for (const [key] of entriesIn(this.root)) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of entriesIn(this.root)) yield value;
  }

  /** The entries as a plain object (`JSON.stringify` uses it). */
  toJSON(): Record<string, V> {
    const object: Record<string, V> = {};
    eachIn(this.root, (value, key) => {
      object[key] = value;
    });
    return object;
  }

  /**
   * Calls `visit` for every key whose value differs between `before` and `after` (by identity):
   * added (`was` undefined), changed, or deleted (`now` undefined). Nodes the two share are
   * skipped, so versions of one map compare in time proportional to what changed.
   */
  static diff<V extends NonNullable<unknown>>(
    before: PersistentMap<V>,
    after: PersistentMap<V>,
    visit: (key: string, was: V | undefined, now: V | undefined) => void,
  ): void {
    diffIn(before.root, after.root, 0, visit);
  }
}

function diffIn<V>(
  one: Child<V> | undefined,
  two: Child<V> | undefined,
  shift: number,
  visit: (key: string, was: V | undefined, now: V | undefined) => void,
): void {
  if (one === two) return;
  if (one instanceof Branch && two instanceof Branch) {
    let slots = one.bitmap | two.bitmap;
    while (slots !== 0) {
      const slot = slots & -slots;
      slots ^= slot;
      const a = (one.bitmap & slot) === 0 ? undefined : one.children[indexOf(one.bitmap, slot)];
      const b = (two.bitmap & slot) === 0 ? undefined : two.children[indexOf(two.bitmap, slot)];
      diffIn(a, b, shift + BITS, visit);
    }
    return;
  }
  // Different kinds of node (a leaf that became a branch, ...): small subtrees, compared whole.
  const was = new Map<string, V>();
  eachIn(one, (value, key) => was.set(key, value));
  eachIn(two, (value, key) => {
    const old = was.get(key);
    if (!was.has(key) || old !== value) visit(key, old, value);
    was.delete(key);
  });
  for (const [key, value] of was) visit(key, value, undefined);
}
