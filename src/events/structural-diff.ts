import { canonicalEntries, hashText, stableHash } from '../lib/stable-hash.js';

/**
 * A bounded summary of how a JSON document changed, for notification text: which top-level paths
 * (object keys, or `[i]` for array items) were added, removed or changed. Documents are reduced
 * to a `Fingerprint` — a stable hash of the whole and short hashes of the top-level entries — so
 * the previous version need not be kept, only its fingerprint.
 */

export interface Fingerprint {
  hash: string;
  kind: 'object' | 'array' | 'scalar';
  /** [top-level path, short hash]; null for scalars and for documents with too many entries. */
  entries: [string, string][] | null;
}

export interface StructuralDiff {
  added: string[];
  removed: string[];
  changed: string[];
  truncated: boolean;
}

/** Documents with more top-level entries than this keep only their whole-document hash. */
export const MAX_FINGERPRINT_ENTRIES = 256;
const MAX_LISTED = 20;
const MAX_PATH = 64;
export const MAX_SUMMARY = 240;
/** The path naming the whole document. */
export const ROOT = '$';

function pathOf(key: string): string {
  return key.length > MAX_PATH ? `${key.slice(0, MAX_PATH - 1)}…` : key;
}

/**
 * The fingerprint of `value`. Given the fingerprint of an earlier observation (`previous`), an
 * unchanged document takes its entries from it: the whole document's hash is all that is computed,
 * not one hash per entry (the common case: a robot's configuration rarely changes).
 */
export function fingerprint(value: unknown, previous?: Fingerprint | null): Fingerprint {
  // toJSON-bearing objects hash as what they serialize to; treat them as a whole.
  const whole =
    value === null ||
    typeof value !== 'object' ||
    (!Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON === 'function');
  if (whole) return { hash: stableHash(value), kind: 'scalar', entries: null };
  const document = value as unknown[] | Record<string, unknown>;
  const kind = Array.isArray(document) ? 'array' : 'object';
  const size = Array.isArray(document) ? document.length : Object.keys(document).length;
  // Each entry's canonical text is written once, for its own hash and the whole document's.
  const texts = size > MAX_FINGERPRINT_ENTRIES ? undefined : canonicalEntries(document);
  if (!texts || texts.entries.length > MAX_FINGERPRINT_ENTRIES)
    return { hash: stableHash(value), kind, entries: null };
  const hash = hashText(texts.whole);
  if (previous?.hash === hash && previous.kind === kind && previous.entries !== null)
    return { hash, kind, entries: previous.entries };
  const entries = texts.entries.map(([key, text]): [string, string] => [
    kind === 'array' ? `[${key}]` : key,
    hashText(text).slice(0, 16),
  ]);
  return { hash, kind, entries };
}

function capped(list: string[]): { list: string[]; cut: boolean } {
  return list.length > MAX_LISTED ? { list: list.slice(0, MAX_LISTED), cut: true } : { list, cut: false };
}

export function diffFingerprints(previous: Fingerprint, current: Fingerprint): StructuralDiff {
  if (previous.hash === current.hash) return { added: [], removed: [], changed: [], truncated: false };
  if (previous.kind !== current.kind || previous.entries === null || current.entries === null) {
    return { added: [], removed: [], changed: [ROOT], truncated: false };
  }
  const before = new Map(previous.entries);
  const after = new Map(current.entries);
  const added = capped([...after.keys()].filter((key) => !before.has(key)).map(pathOf));
  const removed = capped([...before.keys()].filter((key) => !after.has(key)).map(pathOf));
  const changed = capped(
    [...after.keys()].filter((key) => before.has(key) && before.get(key) !== after.get(key)).map(pathOf),
  );
  const truncated = added.cut || removed.cut || changed.cut;
  return { added: added.list, removed: removed.list, changed: changed.list, truncated };
}

/** One line, at most MAX_SUMMARY characters: `loadedRoute: +speed; -legacy; ~waypoints, name`. */
export function summarizeDiff(label: string, diff: StructuralDiff): string {
  const parts: string[] = [];
  if (
    diff.changed.length === 1 &&
    diff.changed[0] === ROOT &&
    diff.added.length + diff.removed.length === 0
  ) {
    parts.push('replaced');
  } else {
    if (diff.added.length > 0) parts.push(`added ${diff.added.join(', ')}`);
    if (diff.removed.length > 0) parts.push(`removed ${diff.removed.join(', ')}`);
    if (diff.changed.length > 0) parts.push(`changed ${diff.changed.join(', ')}`);
    if (parts.length === 0) parts.push('changed');
  }
  const text = `${label}: ${parts.join('; ')}${diff.truncated ? ' …' : ''}`;
  return text.length > MAX_SUMMARY ? `${text.slice(0, MAX_SUMMARY - 1)}…` : text;
}
