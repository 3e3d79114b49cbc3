import { expect } from 'vitest';
import type { FleetEvent } from '../../src/events/types.js';
import { MuteMarks } from '../../src/notifiers/muting/mute-marks.js';
import { readAllEvents } from '../support/scenario.js';
import { orderProblems } from './delivery-order.js';
import { type Drained, waitForDrain } from './drain.js';
import { reorderedEvents } from './entity-order.js';
import { describeLedger, type Ledger, reckon } from './ledger.js';
import { type ResilienceRow, recordRow } from './report.js';
import { RECEIVER, type Stack, type Survival } from './stack.js';

/**
 * The end of every scenario, once its faults are over: wait (bounded) until each change is logged
 * and everything logged has reached the receiver, stop the daemons, count, and write the report
 * row. Nothing here asserts, so the row is written whatever the outcome; `expectNothingLost` then
 * does.
 */

export interface ConcludeOptions {
  order: number;
  scenario: string;
  description: string;
  faults: string;
  changes: number;
  /** Logged events the fault itself legitimately causes (they must still arrive exactly once). */
  tolerated?: (event: FleetEvent) => boolean;
  /** How long logging and delivery may take to catch up after the faults (default 60 s each). */
  timeoutMs?: number;
  /** Notification ids replayed from the dead letters (they go to the end of the queue, by design). */
  replayed?: ReadonlySet<string>;
  notes?: string[];
}

export interface Conclusion {
  ledger: Ledger;
  drained: Drained;
  survival: Survival;
  /** How the receiver's notifications were out of order (see delivery-order.ts); empty when in order. */
  order: string[];
  /** Events that reached the receiver after a later event of their entity (entity-order.ts). */
  reordered: string[];
  row: ResilienceRow;
}

export async function conclude(stack: Stack, options: ConcludeOptions): Promise<Conclusion> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const { scenario } = stack;
  const notes = [`scenario seed ${stack.seed}`, ...(options.notes ?? [])];
  const loggedFrom = Date.now();
  try {
    await scenario.waitForExpected(undefined, { timeoutMs, intervalMs: 250 });
    notes.push(`every change logged ${seconds(Date.now() - loggedFrom)} after the faults ended`);
    // Late or doubled commits would land now.
    await scenario.waitForQuiet({ quietMs: 2_000, timeoutMs });
  } catch (error) {
    notes.push((error as Error).message);
  }
  const drained = await waitForDrain({
    admin: stack.admin,
    log: stack.log,
    prefix: stack.prefix,
    receiver: stack.receiver,
    receiverName: RECEIVER,
    timeoutMs,
  });
  notes.push(
    drained.drained
      ? `everything logged was accepted by the receiver and the queues were empty ${seconds(drained.ms)} later`
      : `delivery did not finish within ${seconds(timeoutMs)}: ${drained.pending}`,
  );
  const survival = await stack.finish();
  const entries = await readAllEvents(stack.log);
  const marks = await new MuteMarks({ redis: stack.admin, prefix: stack.prefix }).read(
    entries.map(({ event }) => event.id),
  );
  const ledger = reckon({
    muted: new Map([...marks].map(([id, mark]) => [id, mark.reason])),
    expected: scenario.expected,
    entries,
    accepted: stack.receiver.accepted(),
    ...(options.tolerated ? { tolerated: options.tolerated } : {}),
  });
  const refused = stack.receiver.deliveries.length - ledger.requestsAccepted;
  if (refused > 0) notes.push(`${refused} requests answered with a failure by the receiver (the fault)`);
  if (drained.deadLetters > 0) notes.push(`${drained.deadLetters} dead letters left`);
  if (ledger.muted.size > 0) {
    const reasons = [...ledger.muted].map(([reason, n]) => `${reason} ×${n}`).join(', ');
    notes.push(`kept out of notifications on purpose, as the rules say (not lost): ${reasons}`);
  }
  if (ledger.tolerated.size > 0) {
    const types = [...ledger.tolerated].map(([type, n]) => `${type} ×${n}`).join(', ');
    notes.push(`events the fault itself caused (logged and delivered like any other): ${types}`);
  }
  notes.push(
    ledger.redelivered.length === 0
      ? 'no notification was accepted twice (no redelivery under the same webhook-id)'
      : `redelivered under the same webhook-id (a receiver deduplicating on it drops them): ${ledger.redelivered.length}`,
  );
  notes.push(...describeLedger(ledger));
  const order = orderProblems(stack.receiver.deliveries, stack.receiver.accepted(), options.replayed);
  notes.push(
    order.length === 0
      ? `delivered in order${options.replayed?.size ? ' (replayed dead letters at the end, by design)' : ''}`
      : `out of order: ${order.join('; ')}`,
  );
  const reordered = reorderedEvents(entries, stack.receiver.accepted(), options.replayed);
  notes.push(
    reordered.length === 0
      ? "every entity's events in the order they were committed"
      : `events after a later one of their entity (${reordered.length}): ${reordered.slice(0, 10).join('; ')}`,
  );
  const row: ResilienceRow = {
    order: options.order,
    scenario: options.scenario,
    description: options.description,
    faults: options.faults,
    changes: options.changes,
    eventsLogged: ledger.eventsLogged,
    eventsDelivered: ledger.eventsDelivered,
    requestsAccepted: ledger.requestsAccepted,
    lost: ledger.lost,
    duplicated: ledger.duplicated,
    reordered: reordered.length,
    redelivered: ledger.redelivered.length,
    survived: survival.survived,
    survival: survival.text,
    notes,
    durationMs: Date.now() - stack.startedAt,
  };
  recordRow(row);
  return { ledger, drained, survival, order, reordered, row };
}

/** The suite's acceptance: nothing lost, doubled, reordered or invented; every process alive. */
export function expectNothingLost({ ledger, survival, reordered }: Conclusion): void {
  expect({
    lost: ledger.lost,
    duplicated: ledger.duplicated,
    reordered,
    invented: ledger.unexpected,
    findings: describeLedger(ledger).filter((line) => !line.startsWith('same notification')),
    survival: survival.survived ? 'survived' : survival.text,
  }).toEqual({ lost: 0, duplicated: 0, reordered: [], invented: [], findings: [], survival: 'survived' });
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
