import { catalogueEntry, isFleetEventType, SUBJECT_ID_FIELD } from './catalogue.js';
import type { EventDraft, FleetEvent } from './types.js';

/**
 * Turns a detector's draft into the CloudEvent the store writes to the outbox. The subject entity
 * is the one the draft names in its data (`vehicleId`, `deviceId` or `upstream`, per the type's
 * subject kind; membership drafts always do), else `entityId`, the entity the caller observed.
 * The entity field is then filled in `data`, so every published event names its entity twice:
 * `subject: vehicle/<id>` and `data.vehicleId`. Throws on an unknown type or when no entity is
 * known — both are programming errors, not data problems.
 */
export function toFleetEvent(
  draft: EventDraft,
  envelope: { id: string; source: string; time: string; entityId?: string },
): FleetEvent {
  if (!isFleetEventType(draft.type)) throw new Error(`unknown event type ${draft.type}`);
  const kind = catalogueEntry(draft.type).subject;
  const field = SUBJECT_ID_FIELD[kind];
  const named = draft.data[field];
  const entityId = typeof named === 'string' && named !== '' ? named : envelope.entityId;
  if (entityId === undefined || entityId === '') {
    throw new Error(`${draft.type}: no ${kind} to use as the subject (data.${field} or entityId)`);
  }
  return {
    specversion: '1.0',
    id: envelope.id,
    source: envelope.source,
    type: draft.type,
    subject: `${kind}/${entityId}`,
    time: envelope.time,
    datacontenttype: 'application/json',
    data: { ...draft.data, [field]: entityId },
  };
}
