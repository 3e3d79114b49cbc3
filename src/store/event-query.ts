import { z } from 'zod';
import { isSince } from './event-log.js';
import { isStreamId } from './stream-entries.js';

/**
 * How a reader names what it wants of the event log: the one set of rules `/api/events`, its SSE
 * stream and `fleetwatch events` check their filters and positions with, so that what one refuses
 * the other refuses in the same words (the API prefixes the field, the CLI the option).
 */

/** `vehicle.vpn.*`: an event type, or a glob of one (`*` any run of characters, `?` one). */
export const eventTypeGlob = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(200, { error: 'must be at most 200 characters' })
  .regex(/^[A-Za-z0-9.*?_-]+$/, { error: 'must be an event type or a glob such as vehicle.vpn.*' });

/** `vehicle/veh-0003`: one subject, exactly. */
export const eventSubject = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(300, { error: 'must be at most 300 characters' });

/** Where a range starts: after a stream id, or at an ISO 8601 time. */
export const eventSince = z.string().refine(isSince, {
  error: 'must be a stream id (such as 1767225600000-0) or an ISO 8601 time (such as 2026-11-21T08:00:00Z)',
});

/** A position in the log: the stream id of an entry (`1767225600000-0`). */
export const eventStreamId = z.string().refine(isStreamId, {
  error: 'must be a stream id such as 1767225600000-0',
});
