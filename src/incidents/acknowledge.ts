import { z } from 'zod';
import { ACK_TEXT_LIMITS, draft, EVENT } from '../events/catalogue.js';
import type { FleetEvent } from '../events/types.js';
import { formatDuration } from '../lib/duration.js';
import { durationField, requiredText } from '../lib/fields.js';
import { parseProblems } from '../lib/issues.js';
import type { IncidentRecord, IncidentStore } from '../store/incidents.js';
import type { SnapshotStore } from '../store/snapshot-store.js';

/**
 * Acknowledging an open incident (`fleetwatch ack`, `POST /api/incidents/{id}/ack`): one
 * `incident.acknowledged` event, committed through the snapshot store together with the
 * acknowledgement in the incident's record (one Lua call, refused when the incident is not open:
 * exactly once, like every event). The notification step then holds the incident's reminders until
 * `until` or its resolution, and shows the acknowledgement in its group's next notification.
 *
 * An acknowledgement lasts `for` (default 4 h, from 1 s to 7 days) unless the incident resolves
 * first; acknowledging again replaces it (a shorter `for` ends it sooner). When it ends without the
 * incident resolving, the reminders start again (the first at once).
 */

export const ACK_DURATION = { defaultMs: 4 * 3_600_000, minMs: 1_000, maxMs: 7 * 86_400_000 } as const;

const words = (what: string, max: number) =>
  requiredText(`must say ${what}`).max(max, { error: `must be at most ${max} characters` });

/** What an operator sends: `{ comment, author, for? }`. */
export const ackInputSchema = z.strictObject({
  comment: words('why, or what is being done (a ticket, "on it")', ACK_TEXT_LIMITS.comment),
  author: words('who acknowledges', ACK_TEXT_LIMITS.by),
  for: durationField(ACK_DURATION.minMs, ACK_DURATION.maxMs).optional(),
});

export type AckInput = z.input<typeof ackInputSchema>;

export type AckOutcome =
  | { kind: 'acknowledged'; record: IncidentRecord; event: FleetEvent }
  | { kind: 'invalid'; problems: string[] }
  | { kind: 'not-found' }
  | { kind: 'closed'; record: IncidentRecord };

export interface AcknowledgeDeps {
  incidents: IncidentStore;
  store: SnapshotStore;
  now?: () => number;
}

/** The bounds of `for`, for help texts. */
export const ACK_DURATION_HELP = `default ${formatDuration(ACK_DURATION.defaultMs)}, from ${formatDuration(ACK_DURATION.minMs)} to ${formatDuration(ACK_DURATION.maxMs)}`;

export async function acknowledgeIncident(
  deps: AcknowledgeDeps,
  id: string,
  input: unknown,
): Promise<AckOutcome> {
  const parsed = parseProblems(ackInputSchema, input);
  if (!parsed.ok) return { kind: 'invalid', problems: parsed.problems };
  const record = await deps.incidents.get(id);
  if (!record) return { kind: 'not-found' };
  if (record.state !== 'open') return { kind: 'closed', record };
  const now = (deps.now ?? Date.now)();
  const at = new Date(now).toISOString();
  const until = new Date(now + (parsed.data.for ?? ACK_DURATION.defaultMs)).toISOString();
  const drafts = [
    draft(EVENT.incidentAcknowledged, {
      incident: record.id,
      entity: record.subject,
      key: record.key,
      firing: record.type,
      since: record.since,
      by: parsed.data.author,
      comment: parsed.data.comment,
      until,
    }),
  ];
  // A conflict means the store was found emptied meanwhile (and the incident carried over): again.
  let result = await deps.store.commitEvents({ at, drafts });
  for (let tries = 1; !result.committed && result.reason === 'version-conflict' && tries < 3; tries += 1) {
    result = await deps.store.commitEvents({ at, drafts });
  }
  if (!result.committed) {
    const current = await deps.incidents.get(id);
    return { kind: 'closed', record: current ?? record };
  }
  const [event] = result.events;
  if (!event) throw new Error('the acknowledgement was committed without its event');
  return {
    kind: 'acknowledged',
    event,
    record: {
      ...record,
      ack: { by: parsed.data.author, comment: parsed.data.comment, at, until, eventId: event.id },
    },
  };
}
