import fc from 'fast-check';

/**
 * Mutations of JSON documents: drop a field or an array item, replace a node with another value
 * (of a kind close enough to fool a careless parser), or add a field (`__proto__` included). Used
 * for payloads that are almost valid and for stored states that have the right shape but values no
 * detector wrote.
 */

type Path = readonly (string | number)[];

const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] =>
  value !== null && typeof value === 'object';

/** Every node's path, the root (`[]`) first. */
function pathsOf(value: unknown, path: Path = []): Path[] {
  if (!isContainer(value)) return [path];
  const children = Array.isArray(value)
    ? value.flatMap((item, index) => pathsOf(item, [...path, index]))
    : Object.keys(value).flatMap((key) => pathsOf(value[key], [...path, key]));
  return [path, ...children];
}

function nodeAt(value: unknown, path: Path): unknown {
  let node = value;
  for (const step of path)
    node = isContainer(node) ? (node as Record<string | number, unknown>)[step] : undefined;
  return node;
}

/** An own, enumerable data property: assignment would treat `__proto__` as the prototype instead. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of `value` with the node at `path` replaced by `change(node)`, or dropped when it returns `DROP`. */
const DROP = Symbol('drop');
function update(value: unknown, path: Path, change: (node: unknown) => unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return change(value);
  if (!isContainer(value)) return value;
  const next = (node: unknown) => update(node, rest, change);
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => {
      if (index !== head) return [item];
      const updated = next(item);
      return updated === DROP ? [] : [updated];
    });
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const updated = key === head ? next(value[key]) : value[key];
    if (updated !== DROP) define(copy, key, updated);
  }
  return copy;
}

/** Values a careless parser mistakes for the real thing: wrong types, empty, huge, prototype names. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1.5, 1e300, 2 ** 53, '', ' ', '0', 'null', 'on', '__proto__', [], {}),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Near misses for a node: the same idea in the wrong type, or the right type with a wrong value. */
function confusions(node: unknown): unknown[] {
  switch (typeof node) {
    case 'string':
      return ['', '   ', `${node} `, 'not a date', '999.1.1.1', '2025-02-30T00:00:00Z', 0, null];
    case 'number':
      return [-1, 1.5, -0.5, 1e300, String(node), null];
    case 'boolean':
      return [String(node), node ? 1 : 0, null];
    default:
      if (node === null) return [0, '', {}, []];
      return Array.isArray(node) ? [{}, null, 'x', [null]] : [[], null, 'x', 1];
  }
}

const extraKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'extra'), fc.string());

/** One mutation of `value`. */
function mutateOnce(value: unknown, replacement: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const paths = pathsOf(value);
  const anyPath = fc.constantFrom(...paths);
  // Near misses first: they are what gets past a schema that is almost right.
  const options: fc.WeightedArbitrary<unknown>[] = [
    {
      weight: 3,
      arbitrary: anyPath.chain((path) =>
        fc.constantFrom(...confusions(nodeAt(value, path))).map((next) => update(value, path, () => next)),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ path: anyPath, next: replacement })
        .map(({ path, next }) => update(value, path, () => next)),
    },
    {
      weight: 1,
      arbitrary: fc.record({ path: anyPath, key: extraKey, added: replacement }).map(({ path, key, added }) =>
        update(value, path, (node) => {
          if (!isContainer(node) || Array.isArray(node)) return node;
          const copy = { ...node };
          define(copy, key, added);
          return copy;
        }),
      ),
    },
  ];
  if (paths.length > 1) {
    options.push({
      weight: 2,
      arbitrary: fc.constantFrom(...paths.slice(1)).map((path) => update(value, path, () => DROP)),
    });
  }
  return fc.oneof(...options);
}

/** A value from `base` with one mutation, sometimes two or three (one alone is never masked by another). */
export function mutated(base: fc.Arbitrary<unknown>, replacement: fc.Arbitrary<unknown> = wrongValue) {
  const count = fc.oneof(
    { weight: 3, arbitrary: fc.constant(1) },
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) },
  );
  return fc.tuple(base, count).chain(([value, count]) => {
    let arbitrary: fc.Arbitrary<unknown> = fc.constant(value);
    for (let i = 0; i < count; i += 1)
      arbitrary = arbitrary.chain((current) => mutateOnce(current, replacement));
    return arbitrary;
  });
}

/** Numbers no clock or counter produces. */
const extremeNumber = fc.constantFrom(1e300, -1e300, 2 ** 53, -(2 ** 53), 8.64e15, -8.64e15, 0.5, -1);

/** A value from `base` with one of its numbers (times, counters) replaced by an extreme one. */
export function withExtremeNumber(base: fc.Arbitrary<unknown>) {
  return base.chain((value) => {
    const numeric = pathsOf(value).filter((path) => typeof nodeAt(value, path) === 'number');
    if (numeric.length === 0) return fc.constant(value);
    return fc
      .record({ path: fc.constantFrom(...numeric), next: extremeNumber })
      .map(({ path, next }) => update(value, path, () => next));
  });
}
