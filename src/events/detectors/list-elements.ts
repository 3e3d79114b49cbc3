import { z } from 'zod';
import { draft, EVENT, MAX_LIST_EXAMPLES } from '../catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, type ListElementsOptions, readOptions } from '../detector-options.js';
import { type Clock, defineDetector, isRecord } from './define.js';
import { alertingSince, judgeIncident, type ThresholdState, thresholdStateSchema } from './threshold.js';

/**
 * Whether a list (the fleet API's vehicles, the robot gateway's robots) is read whole: one
 * observation per list read, how many of its elements are not as the spec says. Each such element
 * is an observation error of its own entity and the rest of the list is observed as usual
 * (pollers/list-poll.ts), so nothing else says that fleetwatch no longer sees part of the fleet:
 * a vehicle such an element names is not watched for its VPN state, and an element naming nothing
 * cannot be told apart at all. An upstream that changes its contract does that to every element
 * at once, silently, unless this says so.
 *
 * `monitor.list.unreadable` after `failureThreshold` consecutive lists with such elements,
 * `monitor.list.readable` after `successThreshold` lists without, with the duration. A list that
 * could not be read at all says nothing here: that is the upstream's health (`upstream-health`).
 * The subject is `upstream/<name>` of the API that serves the list, supplied by the caller.
 */

export interface ListElementsExample {
  id: string | null;
  message: string;
}

export interface ListElements {
  /** Elements of the list in all. */
  elements: number;
  /** Of them, not as the spec says. */
  rejected: number;
  /** Of the rejected, naming no entity. */
  unnamed: number;
  /** Some of the rejected (the first of the list). */
  examples: ListElementsExample[];
}

export interface ListElementsState {
  v: 1;
  list: ThresholdState | null;
}

const stateSchema = z.object({ v: z.literal(1), list: thresholdStateSchema.nullable() });

/** The longest message an example carries (the catalogue's bound). */
const MAX_MESSAGE = 240;

function wholeOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function examplesOf(value: unknown): ListElementsExample[] {
  if (!Array.isArray(value)) return [];
  const examples: ListElementsExample[] = [];
  for (const item of value) {
    if (examples.length === MAX_LIST_EXAMPLES) break;
    if (!isRecord(item) || typeof item.message !== 'string') continue;
    const id = typeof item.id === 'string' && item.id !== '' ? item.id : null;
    const message =
      item.message.length > MAX_MESSAGE ? `${item.message.slice(0, MAX_MESSAGE - 1)}…` : item.message;
    examples.push({ id, message });
  }
  return examples;
}

function readingOf(value: unknown): ListElements | undefined {
  if (!isRecord(value)) return undefined;
  const elements = wholeOf(value.elements);
  const rejected = wholeOf(value.rejected);
  const unnamed = wholeOf(value.unnamed);
  if (elements === undefined || rejected === undefined || unnamed === undefined) return undefined;
  if (rejected > elements || unnamed > rejected) return undefined;
  return { elements, rejected, unnamed, examples: examplesOf(value.examples) };
}

function onList(state: ListElementsState, value: unknown, clock: Clock, options: ListElementsOptions) {
  const reading = readingOf(value);
  if (reading === undefined) return { state, events: [] };
  const judged = judgeIncident(
    state.list,
    reading.rejected === 0,
    clock.at,
    options,
    ['readable', 'unreadable'],
    {
      fired: (data, count) =>
        draft(EVENT.listUnreadable, {
          ...data,
          consecutiveLists: count,
          rejected: reading.rejected,
          elements: reading.elements,
          unnamed: reading.unnamed,
          examples: reading.examples,
        }),
      resolved: (data) => draft(EVENT.listReadable, data),
    },
  );
  return { state: { v: 1 as const, list: judged.state }, events: judged.events };
}

export const listElementsDetector = defineDetector<ListElementsState, ListElements, ListElementsOptions>({
  initial: () => ({ v: 1, list: null }),
  state: stateSchema,
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.listElements),
  onValue: onList,
  seeds: { list: (state, incident) => ({ ...state, list: alertingSince(incident.since) }) },
});
