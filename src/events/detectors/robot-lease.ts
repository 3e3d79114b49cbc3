import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import type { EventDraft } from '../types.js';
import { type Known, knownSchema, track } from './change.js';
import { defineDetector, isRecord } from './define.js';

/**
 * The teleoperation lease (GET /v2/teleop-control/status): `robot.lease.changed` when the holder
 * appears, changes or goes (`previous`/`current` holder, null = nobody), with the current
 * `expiresAt`. Renewals (only `expiresAt` moves) are not events. The first observation is the
 * baseline. A value that is not an object, or a `holderId` that is neither a string nor absent,
 * is ignored; a failed observation changes nothing.
 */

export interface LeaseValue {
  holderId?: string;
  expiresAt?: string;
}

export interface RobotLeaseState {
  v: 1;
  holder: Known<string | null> | null;
}

const stateSchema = z.object({ v: z.literal(1), holder: knownSchema(z.string().nullable()) });

export const robotLeaseDetector = defineDetector<RobotLeaseState, LeaseValue, undefined, unknown>({
  initial: () => ({ v: 1, holder: null }),
  state: stateSchema,
  onValue: (state, value) => {
    if (!isRecord(value)) return { state, events: [] };
    const { holderId, expiresAt } = value;
    const holder =
      holderId === undefined || holderId === null || holderId === ''
        ? null
        : typeof holderId === 'string'
          ? holderId
          : undefined;
    const tracked = track(state.holder, holder);
    const events: EventDraft[] = [];
    if (tracked.change) {
      events.push(
        draft(EVENT.robotLeaseChanged, {
          ...tracked.change,
          expiresAt: tracked.change.current !== null && typeof expiresAt === 'string' ? expiresAt : null,
        }),
      );
    }
    return { state: { v: 1, holder: tracked.known }, events };
  },
});
