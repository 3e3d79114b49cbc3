import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { robotConfigDetector } from '../../src/events/detectors/robot-config.js';
import { fingerprint, MAX_FINGERPRINT_ENTRIES, MAX_SUMMARY } from '../../src/events/structural-diff.js';
import { canonicalJson, stableHash } from '../../src/lib/stable-hash.js';
import { Script, typesOf } from './helpers.js';

describe('stableHash', () => {
  it('is sha256 of canonical JSON with sorted keys', () => {
    expect(canonicalJson({ b: [1, null, { d: 1, c: 2 }], a: 'x' })).toBe(
      '{"a":"x","b":[1,null,{"c":2,"d":1}]}',
    );
    expect(stableHash({ b: 1, a: 2 })).toBe(createHash('sha256').update('{"a":2,"b":1}').digest('hex'));
  });

  it('does not depend on key order, and does depend on values and array order', () => {
    expect(stableHash({ a: 1, b: { c: 2, d: 3 } })).toBe(stableHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(stableHash({ a: 1 })).not.toBe(stableHash({ a: 2 }));
    expect(stableHash([1, 2])).not.toBe(stableHash([2, 1]));
    expect(stableHash('1')).not.toBe(stableHash(1));
  });

  it('writes what JSON cannot carry the way JSON.stringify does, and never throws', () => {
    expect(canonicalJson({ a: undefined, b: Number.NaN, c: [undefined] })).toBe('{"b":null,"c":[null]}');
    expect(canonicalJson(10n)).toBe('"10"');
    // An array's holes, as JSON.stringify writes them.
    const holes: number[] = new Array(3);
    holes[0] = 1;
    holes[2] = 3;
    expect(canonicalJson({ holes })).toBe(`{"holes":${JSON.stringify(holes)}}`);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(canonicalJson(cyclic)).toBe('{"a":1,"self":"[Circular]"}');
    let deep: unknown = 0;
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    expect(() => stableHash(deep)).not.toThrow();
  });
});

describe('fingerprint', () => {
  /** What a fingerprint is by definition: the stable hash of the whole, a short one per entry. */
  function byDefinition(value: unknown) {
    const short = (item: unknown) => stableHash(item).slice(0, 16);
    if (Array.isArray(value))
      return {
        hash: stableHash(value),
        kind: 'array',
        entries:
          value.length > MAX_FINGERPRINT_ENTRIES
            ? null
            : value.map((item, index) => [`[${index}]`, short(item)]),
      };
    if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).filter((key) => record[key] !== undefined);
      return {
        hash: stableHash(value),
        kind: 'object',
        entries:
          keys.length > MAX_FINGERPRINT_ENTRIES ? null : keys.sort().map((key) => [key, short(record[key])]),
      };
    }
    return { hash: stableHash(value), kind: 'scalar', entries: null };
  }

  it('writes each entry once and still equals its definition, for any JSON document', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()), (any, record) => {
        expect(fingerprint(any)).toEqual(byDefinition(any));
        expect(fingerprint(record)).toEqual(byDefinition(record));
        expect(fingerprint({ ...record, gone: undefined })).toEqual(byDefinition(record));
      }),
      { numRuns: 300 },
    );
  });

  it('takes the entries of an earlier fingerprint only for the same document', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (before, after) => {
        const earlier = fingerprint(before);
        expect(fingerprint(after, earlier)).toEqual(byDefinition(after));
        // Read back from a stored state: an equal copy, not the same object.
        expect(fingerprint(before, structuredClone(earlier))).toEqual(byDefinition(before));
      }),
      { numRuns: 300 },
    );
    // The same document: its entries are the earlier ones, not hashed again.
    const earlier = fingerprint({ a: 1, b: [2] });
    expect(fingerprint({ b: [2], a: 1 }, earlier).entries).toBe(earlier.entries);
  });

  it('keeps only the whole hash past the entry limit', () => {
    const many = Array.from({ length: MAX_FINGERPRINT_ENTRIES + 1 }, (_, i) => i);
    expect(fingerprint(many)).toEqual(byDefinition(many));
    expect(fingerprint(Object.fromEntries(many.map((i) => [`k${i}`, i])))).toMatchObject({ entries: null });
  });
});

const config = () => new Script(robotConfigDetector, undefined);
const route = {
  name: 'loop-a',
  waypoints: [
    [1, 2],
    [3, 4],
  ],
  speed: 1.2,
  meta: { author: 'ops' },
};

describe('robot config', () => {
  it('sets each part baseline silently and ignores key order', () => {
    const script = config();
    script.ok(0, { activeSite: { name: 'north' }, loadedRoute: route, loadedZoneSet: null });
    script.ok(10, {
      loadedRoute: {
        meta: { author: 'ops' },
        speed: 1.2,
        waypoints: [
          [1, 2],
          [3, 4],
        ],
        name: 'loop-a',
      },
    });
    expect(script.all).toEqual([]);
  });

  it('reports one event per changed part, with hashes, a structural diff and a summary', () => {
    const script = config();
    script.ok(0, { activeSite: { name: 'north' }, loadedRoute: route });
    const { speed: _dropped, ...rest } = route;
    const next = { ...rest, waypoints: [[1, 2]], lanes: 2 };
    const events = script.ok(10, { activeSite: { name: 'north' }, loadedRoute: next });
    expect(events).toEqual([
      {
        type: EVENT.robotConfigChanged,
        data: {
          severity: 'info',
          part: 'loadedRoute',
          previous: stableHash(route),
          current: stableHash(next),
          diff: { added: ['lanes'], removed: ['speed'], changed: ['waypoints'], truncated: false },
          summary: 'loaded route: added lanes; removed speed; changed waypoints',
        },
      },
    ]);
    expect(script.ok(20, { loadedRoute: next })).toEqual([]);
  });

  it('treats undefined as not observed and null as a real value', () => {
    const script = config();
    script.ok(0, { loadedZoneSet: { name: 'z1', zones: [] } });
    expect(script.ok(10, {})).toEqual([]);
    expect(script.ok(20, { loadedZoneSet: undefined })).toEqual([]);
    const cleared = script.ok(30, { loadedZoneSet: null });
    expect(cleared[0]?.data).toMatchObject({
      part: 'loadedZoneSet',
      diff: { added: [], removed: [], changed: ['$'], truncated: false },
      summary: 'loaded zone set: replaced',
    });
    expect(typesOf(script.ok(40, { loadedZoneSet: { name: 'z2' } }))).toEqual([EVENT.robotConfigChanged]);
  });

  it('bounds the diff and the summary', () => {
    const script = config();
    const wide = (value: number) =>
      Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`a-rather-long-key-name-number-${i}`, value]));
    script.ok(0, { activeSite: wide(1) });
    const [event] = script.ok(10, { activeSite: wide(2) });
    const diff = event?.data.diff as { changed: string[]; truncated: boolean };
    expect(diff.changed).toHaveLength(20);
    expect(diff.truncated).toBe(true);
    expect(String(event?.data.summary).length).toBeLessThanOrEqual(MAX_SUMMARY);
  });

  it('diffs arrays by index and falls back to the whole document when there are too many entries', () => {
    const script = config();
    script.ok(0, { loadedRoute: [1, 2, 3] });
    expect(script.ok(10, { loadedRoute: [1, 5, 3, 4] })[0]?.data.diff).toEqual({
      added: ['[3]'],
      removed: [],
      changed: ['[1]'],
      truncated: false,
    });
    const big = Array.from({ length: 1000 }, (_, i) => i);
    script.ok(20, { loadedRoute: big });
    expect(script.ok(30, { loadedRoute: [...big, 1] })[0]?.data.diff).toEqual({
      added: [],
      removed: [],
      changed: ['$'],
      truncated: false,
    });
  });

  it('ignores failures and values that are not objects', () => {
    const script = config();
    script.ok(0, { activeSite: 'a' });
    script.fail(10, 'timeout');
    script.ok(20, null as never);
    script.ok(30, ['activeSite'] as never);
    expect(script.all).toEqual([]);
  });
});
