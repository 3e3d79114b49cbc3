import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS } from '../../src/events/detector-options.js';
import { listElementsDetector } from '../../src/events/detectors/list-elements.js';
import { at, Script, typesOf } from './helpers.js';

const lists = (failureThreshold = 2, successThreshold = 2) =>
  new Script(listElementsDetector, {
    ...DEFAULT_DETECTOR_OPTIONS.listElements,
    failureThreshold,
    successThreshold,
  });
const whole = { elements: 50, rejected: 0, unnamed: 0, examples: [] };
const example = { id: 'veh-0050', message: 'vehicle "veh-0050": ipAddress: expected a string' };
/** `rejected` of 50 elements not as the spec says, `unnamed` of them naming nothing. */
const broken = (rejected: number, unnamed = 0) => ({
  elements: 50,
  rejected,
  unnamed,
  examples: [example, { id: null, message: 'element 7: id: expected a string' }, example, example],
});

describe('list elements', () => {
  it('is silent on whole lists and on fewer broken lists in a row than the threshold', () => {
    const script = lists();
    script.ok(0, whole);
    script.ok(30, broken(1));
    script.ok(60, whole);
    script.ok(90, broken(3));
    script.ok(120, whole);
    expect(script.all).toEqual([]);
  });

  it('fires with the list that tipped it, at most three examples, and resolves with the duration', () => {
    const script = lists();
    script.ok(0, whole);
    script.ok(30, broken(1));
    expect(script.ok(60, broken(4, 1))).toEqual([
      {
        type: EVENT.listUnreadable,
        data: {
          severity: 'warning',
          previous: 'readable',
          current: 'unreadable',
          since: at(30),
          consecutiveLists: 2,
          rejected: 4,
          elements: 50,
          unnamed: 1,
          examples: [example, { id: null, message: 'element 7: id: expected a string' }, example],
        },
      },
    ]);
    script.ok(90, broken(4));
    script.ok(120, whole);
    expect(typesOf(script.ok(150, whole))).toEqual([EVENT.listReadable]);
    expect(script.all.at(-1)?.data).toMatchObject({ since: at(30), durationMs: 90_000 });
  });

  it('says nothing of a list that could not be read at all: that is the upstream incident', () => {
    const script = lists(1, 1);
    script.ok(0, whole);
    for (let second = 30; second <= 150; second += 30) script.fail(second, 'timeout');
    expect(script.all).toEqual([]);
  });

  it('reports a list broken from the first read, as never seen whole', () => {
    const script = lists(2, 1);
    script.ok(0, broken(50));
    const [event] = script.ok(30, broken(50));
    expect(event?.data.previous).toBeNull();
  });

  it('keeps a long message to the catalogue bound', () => {
    const script = lists(1, 1);
    const [event] = script.ok(0, { ...broken(1), examples: [{ id: 'veh-1', message: 'x'.repeat(1_000) }] });
    const [first] = (event?.data.examples ?? []) as Array<{ message: string }>;
    expect(first?.message).toHaveLength(240);
    expect(first?.message.endsWith('…')).toBe(true);
  });
});
