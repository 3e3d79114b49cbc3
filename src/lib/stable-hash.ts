import { hash } from 'node:crypto';

/**
 * A hash of a JSON value that does not depend on key order: sha256 (hex) of its canonical JSON
 * (object keys sorted by code unit, no whitespace). Values JSON cannot carry are written the way
 * `JSON.stringify` writes them (undefined keys left out, non-finite numbers as null), bigints as
 * strings, cycles as "[Circular]". Never throws.
 */
export function stableHash(value: unknown): string {
  return hashText(canonicalJson(value));
}

/** sha256 (hex) of a canonical JSON text: `stableHash` of a value whose text is already written. */
export function hashText(text: string): string {
  // The one-shot form: no Hash object per call (most texts hashed here are short).
  return hash('sha256', text, 'hex');
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
    if (Array.isArray(object)) {
      // A loop, not a callback made per array (ARCHITECTURE.md, *Hot paths*).
      let text = '[';
      for (let i = 0; i < object.length; i += 1)
        text += `${i === 0 ? '' : ','}${write(object[i], ancestors) ?? 'null'}`;
      return `${text}]`;
    }
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

/**
 * The canonical JSON texts of an array's items or an object's entries (keys sorted by code unit;
 * keys whose value is undefined, a function or a symbol left out, as JSON leaves them out), and
 * the whole value's, each written once: `whole` is `canonicalJson(value)`, and for JSON data each
 * entry's text is `canonicalJson` of its value (`null` for an item JSON cannot carry). Undefined
 * when a text cannot be written (see `canonicalJson`).
 */
export function canonicalEntries(
  value: readonly unknown[] | Record<string, unknown>,
): { whole: string; entries: Array<[string, string]> } | undefined {
  try {
    const ancestors = new Set<object>([value]);
    if (Array.isArray(value)) {
      const entries = new Array<[string, string]>(value.length);
      let whole = '[';
      for (let i = 0; i < value.length; i += 1) {
        const text = write(value[i], ancestors) ?? 'null';
        entries[i] = [String(i), text];
        whole += i === 0 ? text : `,${text}`;
      }
      return { whole: `${whole}]`, entries };
    }
    const record = value as Record<string, unknown>;
    const entries: Array<[string, string]> = [];
    const parts: string[] = [];
    for (const key of Object.keys(record).sort(byCodeUnit)) {
      const kind = typeof record[key];
      if (kind === 'undefined' || kind === 'function' || kind === 'symbol') continue;
      const text = write(record[key], ancestors);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
      entries.push([key, text ?? 'null']);
    }
    return { whole: `{${parts.join(',')}}`, entries };
  } catch {
    return undefined;
  }
}
