import { formatDuration } from '../../../lib/duration.js';
import { classifyExchange } from '../../../lib/http-answer.js';
import { excerptOf } from '../../../lib/http-body.js';
import { parseRetryAfter } from '../../../lib/retry-after.js';
import type { DeliveryOutcome } from '../../notifier.js';

/**
 * What PagerDuty's answer to one Events API event means (pure). PagerDuty documents 202 (accepted),
 * 400 (an invalid event: `{status, message, errors}`), 429 (too many events; retry later) and 5xx
 * (retry); it documents no `Retry-After`, so a 429 without one holds the receiver for 30 s (one
 * half of its one-minute window), and the delivery decision cuts whatever is asked to `max_hold`.
 *
 * | answer | result |
 * |---|---|
 * | 2xx | `accepted` |
 * | 400, other 4xx | `invalid`: this event is refused (the others of the notification still go) |
 * | 429 | `throttled` for `Retry-After`, 30 s without one |
 * | 408, 5xx, network error, time-out | `retry` (with `Retry-After` when a 5xx has one) |
 * | 401, 403, 404 | `rejected`: the URL or the routing key is wrong for every event |
 * | 410 | `gone`: the receiver is disabled |
 * | 3xx | `rejected`: a redirect is not followed; the `url` needs fixing |
 */

export const DEFAULT_THROTTLE_MS = 30_000;
/** Characters of PagerDuty's words kept in a reason. */
const WORDS_LENGTH = 300;

export type EventResult =
  | { kind: 'accepted'; status: number }
  | { kind: 'invalid'; status: number; reason: string }
  /** Sending stops here: the notification's outcome. */
  | { kind: 'stop'; outcome: DeliveryOutcome };

/** PagerDuty's words from an answer body: `invalid event: Event object is invalid (…; …)`. */
export function pagerDutyWords(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return excerptOf(body, WORDS_LENGTH);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return excerptOf(body, WORDS_LENGTH);
  const { status, message, errors } = parsed as { status?: unknown; message?: unknown; errors?: unknown };
  const parts = [status, message].filter((part): part is string => typeof part === 'string' && part !== '');
  const listed = Array.isArray(errors)
    ? errors.filter((item): item is string => typeof item === 'string')
    : [];
  const text = `${parts.join(': ')}${listed.length > 0 ? ` (${listed.join('; ')})` : ''}`;
  return excerptOf(text === '' ? body : text, WORDS_LENGTH);
}

export interface Answer {
  status: number;
  /** The start of the body, already scrubbed of secrets. */
  body: string;
  retryAfter?: string | undefined;
  /** Epoch ms, for a `Retry-After` given as an HTTP date. */
  now: number;
}

export function resultOfAnswer({ status, body, retryAfter, now }: Answer): EventResult {
  const kind = classifyExchange(status);
  if (kind === 'success') return { kind: 'accepted', status };
  const words = pagerDutyWords(body);
  const said = words === '' ? `PagerDuty answered ${status}` : `PagerDuty answered ${status} ${words}`;
  const asked = parseRetryAfter(retryAfter, now);
  switch (kind) {
    case 'client_error':
      return { kind: 'invalid', status, reason: said };
    case 'throttled': {
      const retryAfterMs = asked ?? DEFAULT_THROTTLE_MS;
      return {
        kind: 'stop',
        outcome: {
          kind: 'throttled',
          status,
          retryAfterMs,
          reason: `${said}; retry after ${formatDuration(retryAfterMs)}`,
        },
      };
    }
    case 'gone':
      return { kind: 'stop', outcome: { kind: 'gone', status, reason: said } };
    case 'auth':
    case 'not_found':
      return {
        kind: 'stop',
        outcome: { kind: 'rejected', status, reason: `${said}: check the receiver's url and routing_key` },
      };
    case 'redirect':
      return {
        kind: 'stop',
        outcome: {
          kind: 'rejected',
          status,
          reason: `${said}: redirects are not followed; check the receiver's url`,
        },
      };
    default:
      return {
        kind: 'stop',
        outcome:
          asked === undefined
            ? { kind: 'retry', status, reason: said }
            : { kind: 'retry', status, reason: said, retryAfterMs: asked },
      };
  }
}
