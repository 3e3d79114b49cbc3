import { formatDuration } from '../../../lib/duration.js';
import { classifyExchange } from '../../../lib/http-answer.js';
import { parseRetryAfter as readRetryAfter } from '../../../lib/retry-after.js';
import type { DeliveryOutcome } from '../../notifier.js';

export { EXCERPT_LENGTH, excerptOf } from '../../../lib/http-body.js';

/**
 * What a receiver's answer means (pure), following the Standard Webhooks sender conventions:
 *
 * | answer | outcome |
 * |---|---|
 * | 2xx | `delivered` |
 * | 3xx | `retry`: a redirect is a failure and is not followed (the URL needs fixing) |
 * | 410 | `gone`: the caller disables the receiver and raises `monitor.receiver.disabled` |
 * | 429, 502, 503, 504 | `throttled` for `Retry-After` when the header is there, else `retry` |
 * | other 4xx | `rejected`, with the status and a short excerpt of the body |
 * | other 5xx | `retry` |
 */

export interface ReceiverAnswer {
  status: number;
  /** The raw `Retry-After` header, if any. */
  retryAfter?: string | undefined;
  /** The start of the response body, already scrubbed of secrets. */
  excerpt: string;
  /** Epoch ms, for a `Retry-After` given as an HTTP date. */
  now: number;
}

export function classifyAnswer({ status, retryAfter, excerpt, now }: ReceiverAnswer): DeliveryOutcome {
  const kind = classifyExchange(status);
  if (kind === 'success') return { kind: 'delivered', status };
  const said = excerpt === '' ? `HTTP ${status}` : `HTTP ${status}: ${excerpt}`;
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  switch (kind) {
    case 'redirect':
      return {
        kind: 'retry',
        status,
        reason: `HTTP ${status}: redirects are not followed; check the receiver URL`,
      };
    case 'gone':
      return { kind: 'gone', status, reason: said };
    case 'throttled':
    case 'gateway':
      return retryAfterMs === undefined
        ? { kind: 'retry', status, reason: said }
        : {
            kind: 'throttled',
            status,
            retryAfterMs,
            reason: `HTTP ${status}: retry after ${formatDuration(retryAfterMs)}`,
          };
    case 'auth':
    case 'not_found':
    case 'timeout':
    case 'client_error':
      return { kind: 'rejected', status, reason: said };
    default:
      return retryAfterMs === undefined
        ? { kind: 'retry', status, reason: said }
        : { kind: 'retry', status, reason: said, retryAfterMs };
  }
}

/**
 * The wait a receiver's `Retry-After` asks for (0 for a past date), as asked; undefined when
 * unreadable. The receiver's `max_hold` bounds it where the delivery decision is made.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  return readRetryAfter(value, now);
}
