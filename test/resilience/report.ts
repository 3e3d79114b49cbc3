import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

/**
 * The resilience report: each scenario writes one row (a JSON file in the run's results directory)
 * before it asserts, so a failing scenario shows in the table too; the suite's global teardown
 * renders every row as one Markdown table and writes RESILIENCE.md.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the scenarios of this run write their rows. */
    resilienceDir: string;
    /** The seed every scenario derives its random choices from (RESILIENCE_SEED replays a run). */
    resilienceSeed: number;
  }
}

export interface ResilienceRow {
  /** Position in the table. */
  order: number;
  scenario: string;
  /** One paragraph for the report's header: what the scenario does. */
  description: string;
  faults: string;
  changes: number;
  eventsLogged: number;
  /** Distinct event ids the receiver accepted (answered 2xx). */
  eventsDelivered: number;
  /** Webhook requests the receiver accepted; one request carries one event or a batch. */
  requestsAccepted: number;
  lost: number;
  duplicated: number;
  /** Events the receiver got after a later event of the same entity and incident (entity-order.ts). */
  reordered: number;
  /** Notifications accepted again under the same webhook-id (at least once; shown, not counted as duplicated). */
  redelivered: number;
  survived: boolean;
  survival: string;
  /** What else the run showed: fault-caused events, redeliveries, dead letters, timings. */
  notes: string[];
  durationMs: number;
}

export function resilienceSeed(): number {
  return inject('resilienceSeed');
}

/** Writes the scenario's row for the report (call before asserting, so failures are reported too). */
export function recordRow(row: ResilienceRow): void {
  const dir = inject('resilienceDir');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${String(row.order).padStart(2, '0')}.json`), JSON.stringify(row, null, 2));
}

export function readRows(dir: string): ResilienceRow[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.json'));
  } catch {
    return [];
  }
  return files
    .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as ResilienceRow)
    .sort((a, b) => a.order - b.order);
}

const cell = (text: string | number): string => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');

export function renderTable(rows: readonly ResilienceRow[]): string {
  const header =
    '| scenario | faults injected | changes made | events logged | deliveries | lost | duplicated | reordered | survived |';
  const rule = '|---|---|---:|---:|---|---:|---:|---:|---|';
  const lines = rows.map((row) =>
    [
      row.scenario,
      row.faults,
      row.changes,
      row.eventsLogged,
      `${row.eventsDelivered} events in ${row.requestsAccepted} requests`,
      row.lost,
      row.redelivered > 0
        ? `${row.duplicated} (+${row.redelivered} redelivered under the same webhook-id)`
        : row.duplicated,
      row.reordered,
      `${row.survived ? 'yes' : '**NO**'}: ${row.survival}`,
    ]
      .map(cell)
      .join(' | '),
  );
  return [header, rule, ...lines.map((line) => `| ${line} |`)].join('\n');
}

export interface RunFacts {
  seed: number;
  durationMs: number;
  node: string;
  cores: number;
  platform: string;
  date: string;
}

/** The whole RESILIENCE.md. */
export function renderReport(rows: readonly ResilienceRow[], facts: RunFacts): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
  const scenarios = rows.map(
    (row) => `- **${row.scenario}** (${seconds(row.durationMs)}). ${row.description}`,
  );
  const notes = rows.flatMap((row) => [
    `### ${row.scenario}`,
    '',
    ...row.notes.map((note) => `- ${note}`),
    '',
  ]);
  return [
    '# Resilience',
    '',
    '`npm run test:resilience` runs real `fleetwatch run` processes against a simulated fleet, a',
    'Redis and a signed-webhook receiver, injects faults while the fleet keeps changing, and counts',
    'every change from the simulator to the receiver. This file is written by the last run.',
    '',
    '- **lost**: changes with no event in the log, plus logged events the receiver never accepted.',
    '  An event kept out of notifications on purpose (an inhibition rule, a silence) is not lost: the',
    '  notes count them.',
    '- **duplicated**: changes logged more than once, plus events the receiver accepted in more than',
    '  one notification (distinct `webhook-id`s). A notification sent again under the same',
    '  `webhook-id` (at-least-once delivery; Standard Webhooks receivers drop the repeat) is shown',
    '  beside it as a redelivery, and explained under the notes.',
    '- **reordered**: events the receiver first accepted after a later-committed event of the same',
    '  entity and incident (a resolve before its fire) or, outside incidents, of the same entity and',
    '  type (an older lease holder after a newer one). Events of different types travel in different',
    '  notification groups, whose timers are their own, so their relative order is not promised.',
    '- **deliveries**: distinct event ids in the requests the receiver answered with 2xx; a request',
    '  carries one event (`application/cloudevents+json`) or a batch (`…-batch+json`).',
    '- **survived**: every fleetwatch process the scenario did not kill on purpose was still running',
    '  at the end and exited 0 on SIGTERM.',
    '',
    `Run: ${facts.date}, seed ${facts.seed} (\`RESILIENCE_SEED=${facts.seed}\` replays the random`,
    `choices), ${seconds(facts.durationMs)} in all; Node ${facts.node}, ${facts.cores} cores, ${facts.platform}.`,
    '',
    '## Scenarios',
    '',
    ...scenarios,
    '',
    '## Results',
    '',
    renderTable(rows),
    '',
    '## What the counts do not show',
    '',
    '- Delivery is at least once. A replica killed after the receiver took a request and before',
    '  the answer was recorded (the delivered marker) cannot know it was delivered; once BullMQ finds',
    '  its job stalled, another replica sends it again under the same `webhook-id`. No sender can',
    "  do better (what it lost is the receiver's answer); the replica-kill scenario provokes it once",
    '  on purpose and checks that every repeat is of this kind.',
    '- Such a stalled delivery holds its receiver (one notification at a time, in order) until',
    "  BullMQ's lock has run out and its stalled check has seen it: 30 to 60 s with BullMQ's defaults",
    '  (lock 30 s, check every 30 s), which the config file does not change. Late, not lost.',
    '- A Redis that comes back without its data is not counted: fleetwatch survives it, says so once',
    '  (`monitor.store.reset`), carries the open incidents over and relearns the rest of the fleet as a',
    '  silent baseline, but what changed while its memory was gone, and what was still on its way',
    '  out, cannot be reported (test/system/integration/store-reset.test.ts).',
    '',
    '## Notes',
    '',
    ...notes,
  ].join('\n');
}
