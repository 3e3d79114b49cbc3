import { z } from 'zod';
import { NAV_GOAL_STATUS } from '../../upstream/schemas/robot.js';
import { draft, EVENT } from '../catalogue.js';
import type { EventDraft } from '../types.js';
import { type Known, knownSchema, track } from './change.js';
import { defineDetector, isRecord } from './define.js';

/**
 * Platform feedback (GET /v2/platform-feedback), normalized by `normalizeFeedback`:
 * - `robot.autonomy.changed` when the autonomy state (`cortex_status`) changes,
 * - `robot.navigation.changed` when the navigation goal status changes (warning when it becomes
 *   aborted, 6; info otherwise),
 * - `robot.state.changed` when `vehicle_feedback.state` changes.
 *
 * A status is compared by its number when both sides have one, else by its text when both have
 * one; a change of wording alone is not an event. A part that is absent from an observation
 * (neither number nor text) triggers nothing and keeps what was known. The first value of each
 * part is its baseline. A failed observation changes nothing.
 */

/** The parts of platform feedback fleetwatch watches; every field optional. */
export interface FeedbackValue {
  cortexStatus?: number;
  cortexText?: string;
  navStatus?: number;
  navText?: string;
  vehicleState?: string;
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

function intOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,9}$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/**
 * Extracts the watched parts from a platform-feedback payload: the whole response
 * (`{ data: { platform_feedback } }`), `{ platform_feedback }`, or the `platform_feedback` object
 * itself. Anything unexpected is left out; never throws.
 */
export function normalizeFeedback(payload: unknown): FeedbackValue {
  try {
    const nested = field(field(payload, 'data'), 'platform_feedback') ?? field(payload, 'platform_feedback');
    const feedback = isRecord(nested) ? nested : payload;
    const cortex = field(feedback, 'cortex_status');
    const goal = field(field(feedback, 'navigation_feedback'), 'nav2_goal_status');
    const out: FeedbackValue = {};
    const cortexStatus = intOf(field(cortex, 'status'));
    const cortexText = textOf(field(cortex, 'status_text'));
    const navStatus = intOf(field(goal, 'status'));
    const navText = textOf(field(goal, 'status_text'));
    const vehicleState = textOf(field(field(feedback, 'vehicle_feedback'), 'state'));
    if (cortexStatus !== undefined) out.cortexStatus = cortexStatus;
    if (cortexText !== undefined) out.cortexText = cortexText;
    if (navStatus !== undefined) out.navStatus = navStatus;
    if (navText !== undefined) out.navText = navText;
    if (vehicleState !== undefined) out.vehicleState = vehicleState;
    return out;
  } catch {
    return {};
  }
}

export interface StatusPair {
  status: number | null;
  text: string | null;
}

export interface RobotFeedbackState {
  v: 1;
  autonomy: Known<StatusPair> | null;
  navigation: Known<StatusPair> | null;
  vehicleState: Known<string> | null;
}

const pairSchema = z.object({ status: z.number().int().nullable(), text: z.string().nullable() });
const stateSchema = z.object({
  v: z.literal(1),
  autonomy: knownSchema(pairSchema),
  navigation: knownSchema(pairSchema),
  vehicleState: knownSchema(z.string()),
});

function pairOf(status: unknown, text: unknown): StatusPair | undefined {
  const pair = { status: intOf(status) ?? null, text: textOf(text) ?? null };
  return pair.status === null && pair.text === null ? undefined : pair;
}

/** Same status: by number when both have one, else by text when both have one, else "can't tell" (same). */
function sameStatus(a: StatusPair, b: StatusPair): boolean {
  if (a.status !== null && b.status !== null) return a.status === b.status;
  if (a.text !== null && b.text !== null) return a.text.toLowerCase() === b.text.toLowerCase();
  return true;
}

/** When two statuses are the same, keep what the previous one knew and the current one left out. */
function mergeStatus(previous: StatusPair, current: StatusPair): StatusPair {
  return { status: current.status ?? previous.status, text: current.text ?? previous.text };
}

const ABORTED = 6;

function isAborted(pair: StatusPair): boolean {
  return pair.status === ABORTED || (pair.status === null && pair.text?.toLowerCase() === 'aborted');
}

/** For the event: a navigation status without text gets the ROS goal-status word. */
function named(pair: StatusPair): StatusPair {
  return pair.text !== null || pair.status === null
    ? pair
    : { ...pair, text: NAV_GOAL_STATUS[pair.status] ?? null };
}

export const robotFeedbackDetector = defineDetector<RobotFeedbackState, FeedbackValue, undefined, unknown>({
  initial: () => ({ v: 1, autonomy: null, navigation: null, vehicleState: null }),
  state: stateSchema,
  onValue: (state, value) => {
    if (!isRecord(value)) return { state, events: [] };
    const events: EventDraft[] = [];

    const autonomy = track(
      state.autonomy,
      pairOf(value.cortexStatus, value.cortexText),
      sameStatus,
      mergeStatus,
    );
    if (autonomy.change) events.push(draft(EVENT.robotAutonomyChanged, autonomy.change));

    const navigation = track(
      state.navigation,
      pairOf(value.navStatus, value.navText),
      sameStatus,
      mergeStatus,
    );
    if (navigation.change) {
      events.push(
        draft(EVENT.robotNavigationChanged, {
          previous: named(navigation.change.previous),
          current: named(navigation.change.current),
          severity: isAborted(navigation.change.current) ? 'warning' : 'info',
        }),
      );
    }

    const vehicleState = track(state.vehicleState, textOf(value.vehicleState));
    if (vehicleState.change) events.push(draft(EVENT.robotStateChanged, vehicleState.change));

    return {
      state: {
        v: 1,
        autonomy: autonomy.known,
        navigation: navigation.known,
        vehicleState: vehicleState.known,
      },
      events,
    };
  },
});
