import type { ReceiverBase } from '../notifier.js';
import type { DeadLetters } from './dead-letters.js';
import type { DisabledReceivers, ReceiverDisabled } from './disabled-receivers.js';
import type { ReceiverHold, ReceiverHolds } from './holds.js';

/**
 * The delivery state of each configured receiver, as `fleetwatch receiver list` and
 * `GET /api/receivers` show it: disabled (and why), held (until when and why), its `max_hold`
 * and its dead letters. One read for both, so the two never tell different stories.
 */
export interface ReceiverState {
  name: string;
  kind: string;
  /** Set while the receiver is disabled (it answered that it is gone). */
  disabled: ReceiverDisabled | null;
  /** Set while the receiver is held: nothing is sent to it until `hold.until`, or `receiver resume`. */
  hold: ReceiverHold | null;
  /** The longest its own `Retry-After` may hold it, in ms. */
  maxHoldMs: number;
  deadLetters: number;
}

export interface ReceiverStateSources {
  disabledReceivers: Pick<DisabledReceivers, 'status'>;
  holds: Pick<ReceiverHolds, 'statuses'>;
  deadLetters: Pick<DeadLetters, 'count'>;
}

export async function readReceiverStates(
  receivers: readonly Pick<ReceiverBase, 'name' | 'kind' | 'max_hold'>[],
  sources: ReceiverStateSources,
): Promise<ReceiverState[]> {
  const holds = await sources.holds.statuses(receivers.map((receiver) => receiver.name));
  return Promise.all(
    receivers.map(async ({ name, kind, max_hold }) => ({
      name,
      kind,
      disabled: (await sources.disabledReceivers.status(name)) ?? null,
      hold: holds.get(name) ?? null,
      maxHoldMs: max_hold,
      deadLetters: await sources.deadLetters.count({ receiver: name }),
    })),
  );
}
