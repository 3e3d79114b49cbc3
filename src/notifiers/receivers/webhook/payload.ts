import type { FleetEvent } from '../../../events/types.js';

/**
 * The request body: CloudEvents in structured JSON mode, per the CloudEvents HTTP binding.
 *
 * - one event: the event object, `application/cloudevents+json`;
 * - several (a group the router put together): a batch, a JSON array of event objects, oldest
 *   first, `application/cloudevents-batch+json`.
 *
 * One notification is one request either way, so its outcome is one outcome and `webhook-id`
 * (the notification id) is the receiver's idempotency key for every event in it: a retry after a
 * lost answer repeats the same webhook-id and the receiver drops it. A request per event would
 * turn one delivery into several with partial failures, and re-send the delivered ones on retry.
 */

export const CLOUDEVENT_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';
export const CLOUDEVENT_BATCH_CONTENT_TYPE = 'application/cloudevents-batch+json; charset=utf-8';

export interface EncodedPayload {
  /** Serialised once: these exact bytes are signed and sent. */
  body: Buffer;
  contentType: string;
}

/** Throws when there is no event, or an event cannot be written as JSON (a bug upstream of here). */
export function encodePayload(events: readonly FleetEvent[]): EncodedPayload {
  const [only] = events;
  if (only === undefined) throw new Error('the notification has no events');
  const single = events.length === 1;
  const text = JSON.stringify(single ? only : events);
  return {
    body: Buffer.from(text, 'utf8'),
    contentType: single ? CLOUDEVENT_CONTENT_TYPE : CLOUDEVENT_BATCH_CONTENT_TYPE,
  };
}
