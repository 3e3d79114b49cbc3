import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CLOUDEVENT_BATCH_CONTENT_TYPE,
  CLOUDEVENT_CONTENT_TYPE,
  encodeParts,
  encodePayload,
  partId,
} from '../../../../src/notifiers/receivers/webhook/payload.js';
import { vpnEvent } from './helpers.js';

function eventsOf(sizes: readonly number[]) {
  return sizes.map((size, index) => {
    const event = vpnEvent(`veh-${index}`);
    return { ...event, data: { ...event.data, note: 'x'.repeat(size) } };
  });
}

describe('encodeParts', () => {
  it('sends every event once, in order, each part within the limit and as full as it can be', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 300, max: 20_000 }),
        (sizes, maxBody) => {
          const events = eventsOf(sizes);
          const parts = encodeParts(events, maxBody);
          const sent = parts.flatMap((part) => {
            const payload = JSON.parse(part.body.toString('utf8'));
            const batch = part.contentType === CLOUDEVENT_BATCH_CONTENT_TYPE;
            expect(Array.isArray(payload)).toBe(batch);
            return batch ? payload : [payload];
          });
          expect(sent).toEqual(events);
          let next = 0;
          for (const [index, part] of parts.entries()) {
            const count =
              part.contentType === CLOUDEVENT_BATCH_CONTENT_TYPE
                ? JSON.parse(part.body.toString()).length
                : 1;
            // Over the limit only alone.
            if (part.body.length > maxBody) expect(count).toBe(1);
            next += count;
            // The next event would not have fitted.
            if (index < parts.length - 1) {
              const grown = encodePayload(events.slice(next - count, next + 1)).body.length;
              expect(grown).toBeGreaterThan(maxBody);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is the one request of encodePayload when everything fits', () => {
    const events = eventsOf([10, 20, 30]);
    expect(encodeParts(events, 1_048_576)).toEqual([encodePayload(events)]);
    expect(encodeParts(events.slice(0, 1), 1_048_576)).toEqual([encodePayload(events.slice(0, 1))]);
    expect(encodeParts(events.slice(0, 1), 10)[0]?.contentType).toBe(CLOUDEVENT_CONTENT_TYPE);
    expect(() => encodeParts([], 1_000)).toThrow('the notification has no events');
  });

  it('names the parts after the notification', () => {
    expect(partId('ntf-1', 0, 1)).toBe('ntf-1');
    expect(partId('ntf-1', 1, 3)).toBe('ntf-1~part-2-of-3');
  });
});
