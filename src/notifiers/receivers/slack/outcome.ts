import { IncomingWebhookHTTPError, IncomingWebhookRequestError } from '@slack/webhook';
import { classifyExchange } from '../../../lib/http-answer.js';
import { parseRetryAfter as readRetryAfter } from '../../../lib/retry-after.js';
import type { DeliveryOutcome } from '../../notifier.js';

/**
 * How Slack's answer to one incoming-webhook post becomes a `DeliveryOutcome`.
 *
 * | answer | outcome |
 * |---|---|
 * | 2xx (`ok`) | `delivered` |
 * | 429 `rate_limited` | `throttled`, `retryAfterMs` from `Retry-After` (seconds or HTTP date; 1 s when absent or unreadable; at least 1 s) |
 * | 410 `channel_is_archived`; `no_service`, `no_team`, `team_disabled`, `invalid_token` (any 4xx) | `gone`: every later message would fail the same way until someone fixes the channel or the webhook, so the receiver is disabled rather than filling the dead-letter list |
 * | 400 `invalid_payload` / `user_not_found` / `invalid_blocks`…, 403 `action_prohibited`, 404 `channel_not_found`, other 4xx | `rejected`: this message is dead-lettered with Slack's error word |
 * | 408, 5xx (`rollup_error`), network error, time-out | `retry` (with `retryAfterMs` when a 5xx carries `Retry-After`) |
 * | 3xx | `rejected`: a webhook URL that redirects is misconfigured |
 *
 * Reasons name the status and Slack's error word, never the URL; the caller scrubs them too.
 */

/** Slack errors that mean the webhook itself no longer works (revoked, workspace disabled). */
const WEBHOOK_GONE = new Set([
  'channel_is_archived',
  'no_service',
  'no_team',
  'team_disabled',
  'invalid_token',
]);

export const DEFAULT_RETRY_AFTER_MS = 1_000;
export const MIN_RETRY_AFTER_MS = 1_000;

/**
 * The wait a `Retry-After` asks for, by Slack's rules: delta-seconds (`30`, also `1.5`) or an HTTP
 * date; the default when absent or unreadable; never below 1 s (Slack allows about one message a
 * second per webhook, so asking again sooner only earns another 429). The receiver's `max_hold`
 * bounds it where the delivery decision is made.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number {
  const ms = readRetryAfter(value, now, { fractions: true }) ?? DEFAULT_RETRY_AFTER_MS;
  return Math.max(MIN_RETRY_AFTER_MS, ms);
}

/** Slack's error word from a body (`channel_not_found`), or a cut-down one-line excerpt of anything else. */
export function slackError(body: string): string {
  const text = body.trim();
  if (/^[a-z0-9_]{1,100}$/i.test(text)) return text;
  const line = text.replace(/\s+/g, ' ').slice(0, 120);
  return line === '' ? 'no body' : `body "${line}${text.length > 120 ? '…' : ''}"`;
}

export interface AnswerLike {
  status: number;
  body: string;
  headers?: { get(name: string): string | null };
}

/** The outcome of a post that got an answer. */
export function outcomeOfAnswer(answer: AnswerLike, now: number = Date.now()): DeliveryOutcome {
  const { status } = answer;
  const kind = classifyExchange(status);
  if (kind === 'success') return { kind: 'delivered', status };
  const error = slackError(answer.body);
  const said = `Slack answered ${status} ${error}`;
  const retryAfter = answer.headers?.get('retry-after');
  switch (kind) {
    case 'throttled': {
      const retryAfterMs = parseRetryAfter(retryAfter, now);
      return { kind: 'throttled', status, retryAfterMs, reason: `${said}; retry after ${retryAfterMs} ms` };
    }
    case 'timeout':
    case 'gateway':
    case 'server_error':
      return retryAfter
        ? { kind: 'retry', status, reason: said, retryAfterMs: parseRetryAfter(retryAfter, now) }
        : { kind: 'retry', status, reason: said };
    case 'gone':
      return { kind: 'gone', status, reason: said };
    case 'auth':
    case 'not_found':
    case 'client_error':
      return { kind: WEBHOOK_GONE.has(error) ? 'gone' : 'rejected', status, reason: said };
    case 'redirect':
      return {
        kind: 'rejected',
        status,
        reason: `${said}: the webhook URL redirects; check the receiver's url`,
      };
    default:
      return { kind: 'rejected', status, reason: said };
  }
}

export interface FailureContext {
  timeoutMs: number;
  /** The delivery's own signal was aborted (shutdown), not the time-out. */
  aborted: boolean;
}

/** The outcome of a post that threw: an HTTP error the library raised, or no answer at all. */
export function outcomeOfError(error: unknown, context: FailureContext): DeliveryOutcome {
  if (error instanceof IncomingWebhookHTTPError) {
    return outcomeOfAnswer({ status: error.statusCode, body: error.body ?? '' });
  }
  const cause = error instanceof IncomingWebhookRequestError ? error.original : error;
  if (cause instanceof Error && cause.name === 'TimeoutError') {
    return { kind: 'retry', reason: `no answer from Slack within ${context.timeoutMs} ms` };
  }
  if (context.aborted) return { kind: 'retry', reason: 'delivery aborted before Slack answered' };
  return { kind: 'retry', reason: `could not reach Slack: ${describeNetworkError(cause)}` };
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ? `${error.message} (${code}: ${cause.message})` : `${error.message} (${cause.message})`;
  }
  return error.message;
}
