import { expect } from 'vitest';
import { validateDraft } from '../../src/events/catalogue.js';
import type { Detector, EventDraft, Observation } from '../../src/events/types.js';

export const T0 = Date.parse('2025-03-01T12:00:00.000Z');

/** ISO time `seconds` after T0. */
export function at(seconds: number): string {
  return new Date(T0 + seconds * 1000).toISOString();
}

/** Fails the test unless every draft is a known type whose data matches its catalogue schema. */
export function expectValidDrafts(events: readonly EventDraft[]): void {
  const problems = events.flatMap((event) => {
    const result = validateDraft(event);
    return result.ok ? [] : result.problems;
  });
  expect(problems).toEqual([]);
}

/** Fails the test unless the state is plain JSON (survives a round trip unchanged). */
export function expectPlainJson(state: unknown): void {
  expect(JSON.parse(JSON.stringify(state))).toStrictEqual(state);
}

export function typesOf(events: readonly EventDraft[]): string[] {
  return events.map((event) => event.type);
}

export function countOf(events: readonly EventDraft[], type: string): number {
  return events.filter((event) => event.type === type).length;
}

export function failure(code: string, status?: number): { code: string; status?: number; message: string } {
  return status === undefined ? { code, message: code } : { code, status, message: `${code} (${status})` };
}

/**
 * Drives a detector through a scripted sequence of observations the way the store does: the state
 * goes through JSON between steps (as it does through Redis), and every step's drafts are checked
 * against the catalogue and its state for being plain JSON.
 */
export class Script<State, Value, Options> {
  state: State | undefined;
  readonly all: EventDraft[] = [];

  constructor(
    private readonly detector: Detector<State, Value, Options>,
    private readonly options: Options,
    initial?: unknown,
  ) {
    this.state = initial as State | undefined;
  }

  /** A successful observation `seconds` after T0; `now` defaults to the observation time. */
  ok(seconds: number, value: Value, nowSeconds = seconds): EventDraft[] {
    return this.step({ ok: true, at: at(seconds), value }, nowSeconds);
  }

  /** A failed observation. */
  fail(seconds: number, code: string, status?: number, nowSeconds = seconds): EventDraft[] {
    return this.step({ ok: false, at: at(seconds), error: failure(code, status) }, nowSeconds);
  }

  step(observation: Observation<Value>, nowSeconds: number): EventDraft[] {
    const previous = this.state === undefined ? undefined : (JSON.parse(JSON.stringify(this.state)) as State);
    const result = this.detector(previous, observation, {
      now: T0 + nowSeconds * 1000,
      options: this.options,
    });
    expectValidDrafts(result.events);
    expectPlainJson(result.state);
    this.state = result.state;
    this.all.push(...result.events);
    return result.events;
  }

  count(type: string): number {
    return countOf(this.all, type);
  }
}

/** mulberry32: a small seeded PRNG so random-input tests are reproducible. */
export class Random {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }

  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Arbitrary JSON-ish value, including the awkward corners (prototype keys, big numbers). */
  json(depth = 3): unknown {
    const roll = this.int(0, depth > 0 ? 9 : 6);
    switch (roll) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.pick([0, -1, 1.5, 42, 2 ** 53, -(2 ** 60), 1e300]);
      case 3:
        return this.pick(['', 'on', 'off', 'x', '__proto__', '2025-03-01T12:00:00Z', 'not a date']);
      case 4:
        return undefined;
      case 5:
        return this.pick([[], {}, { x: 1 }, [null], { __proto__: null }]);
      case 6:
        return this.pick(['constructor', 'toString', 'valueOf']);
      case 7:
      case 8: {
        const out: Record<string, unknown> = {};
        const keys = [
          'v',
          'state',
          'known',
          'missing',
          'vpn',
          'ip',
          'value',
          'reading',
          'alerting',
          'streak',
          '__proto__',
        ];
        for (let i = this.int(0, 4); i > 0; i -= 1) {
          Object.defineProperty(out, this.pick(keys), {
            value: this.json(depth - 1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      }
      default:
        return Array.from({ length: this.int(0, 3) }, () => this.json(depth - 1));
    }
  }
}
