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
