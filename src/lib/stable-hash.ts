import { createHash } from 'node:crypto';

/**
 * A hash of a JSON value that does not depend on key order: sha256 (hex) of its canonical JSON
 * (object keys sorted by code unit, no whitespace). Values JSON cannot carry are written the way
 * `JSON.stringify` writes them (undefined keys left out, non-finite numbers as null), bigints as
 * strings, cycles as "[Circular]". Never throws.
 */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** The canonical JSON text `stableHash` hashes. */
export function canonicalJson(value: unknown): string {
  try {
    return write(value, new Set()) ?? 'null';
  } catch {
    // Only a pathological value (nesting deeper than the stack, a throwing toJSON) gets here.
    return '"[Unhashable]"';
  }
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Canonical text of a value, or undefined where JSON would leave it out. */
function write(value: unknown, ancestors: Set<object>): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) return '"[Circular]"';
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return write(toJSON.call(object), ancestors);
  ancestors.add(object);
  try {
    if (Array.isArray(object)) return `[${object.map((item) => write(item, ancestors) ?? 'null').join(',')}]`;
    const record = object as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort(byCodeUnit)) {
      const text = write(record[key], ancestors);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    ancestors.delete(object);
  }
}
