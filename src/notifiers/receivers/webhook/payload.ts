import type { FleetEvent } from '../../../events/types.js';

/**
 * The request body: CloudEvents in structured JSON mode, per the CloudEvents HTTP binding.
 *
 * - one event: the event object, `application/cloudevents+json`;
 * - several (a group the router put together): a batch, a JSON array of event objects, oldest
 *   first, `application/cloudevents-batch+json`.
 *
 * One notification is one request, so its outcome is one outcome and `webhook-id` (the
 * notification id) is the receiver's idempotency key for every event in it: a retry after a lost
 * answer repeats the same webhook-id and the receiver drops it. A request per event would turn one
 * delivery into several with partial failures, and re-send the delivered ones on retry.
 *
 * Unless the body would exceed the receiver's `max_body`: a storm into one group (a site of
 * thousands of robots going dark) makes a notification of megabytes, and web servers and
 * frameworks refuse large bodies by default (nginx at 1 MiB, Express at 100 KB), which would make
 * the notification that matters most undeliverable. Its events are then sent in parts, in order,
 * each a batch of consecutive events within `max_body` (`encodeParts`); an event larger than it
 * alone goes alone.
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
  return encodeParts(events, Number.POSITIVE_INFINITY)[0]!;
}

/**
 * The request bodies for `events` when none may exceed `maxBody` bytes: one when they all fit
 * (`encodePayload`'s), else consecutive runs of events, oldest first, each as large as fits. A part
 * of one event is that event (`application/cloudevents+json`), as any single event is. Throws as
 * `encodePayload` does.
 */
export function encodeParts(events: readonly FleetEvent[], maxBody: number): EncodedPayload[] {
  if (events.length === 0) throw new Error('the notification has no events');
  const texts = events.map((event) => JSON.stringify(event));
  const runs: string[][] = [];
  let run: string[] = [];
  // A batch's bytes: its events, a comma between two, and the brackets.
  let bytes = 2;
  for (const text of texts) {
    const size = Buffer.byteLength(text, 'utf8');
    const grown = bytes + size + (run.length > 0 ? 1 : 0);
    if (run.length > 0 && grown > maxBody) {
      runs.push(run);
      run = [];
      bytes = 2;
    }
    bytes += size + (run.length > 0 ? 1 : 0);
    run.push(text);
  }
  runs.push(run);
  // The same bytes `JSON.stringify` writes for the array: no spaces between the elements.
  return runs.map((texts) =>
    texts.length === 1
      ? { body: Buffer.from(texts[0]!, 'utf8'), contentType: CLOUDEVENT_CONTENT_TYPE }
      : { body: Buffer.from(`[${texts.join(',')}]`, 'utf8'), contentType: CLOUDEVENT_BATCH_CONTENT_TYPE },
  );
}

/** The `webhook-id` of part `index` (0-based) of `count`: the notification id when it is whole. */
export function partId(notificationId: string, index: number, count: number): string {
  return count === 1 ? notificationId : `${notificationId}~part-${index + 1}-of-${count}`;
}
