import { formatDuration } from '../../config/duration.js';
import type { DeliveryOutcome } from '../types.js';

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

/** A receiver cannot hold us off for longer than this, whatever its `Retry-After` says. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
export const EXCERPT_LENGTH = 200;

const THROTTLING = new Set([429, 502, 503, 504]);

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
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  const said = excerpt === '' ? `HTTP ${status}` : `HTTP ${status}: ${excerpt}`;
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  if (status >= 300 && status < 400) {
    return {
      kind: 'retry',
      status,
      reason: `HTTP ${status}: redirects are not followed; check the receiver URL`,
    };
  }
  if (status === 410) return { kind: 'gone', status, reason: said };
  if (THROTTLING.has(status)) {
    return retryAfterMs === undefined
      ? { kind: 'retry', status, reason: said }
      : {
          kind: 'throttled',
          status,
          retryAfterMs,
          reason: `HTTP ${status}: retry after ${formatDuration(retryAfterMs)}`,
        };
  }
  if (status >= 400 && status < 500) return { kind: 'rejected', status, reason: said };
  return retryAfterMs === undefined
    ? { kind: 'retry', status, reason: said }
    : { kind: 'retry', status, reason: said, retryAfterMs };
}

/** `Retry-After` as delay-seconds or an HTTP date, in ms from `now` (0 for a past date), capped. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1_000;
  } else {
    const at = Date.parse(text);
    if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** One line of at most 200 characters: control characters and runs of white space collapsed. */
export function excerptOf(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim();
  return line.length <= EXCERPT_LENGTH ? line : `${line.slice(0, EXCERPT_LENGTH - 1)}…`;
}
