import { IncomingWebhookHTTPError, IncomingWebhookRequestError } from '@slack/webhook';
import { classifyExchange } from '../../../lib/http-answer.js';
import { parseRetryAfter as readRetryAfter } from '../../../lib/retry-after.js';
import type { DeliveryOutcome } from '../../notifier.js';
import { type CompatibleService, SERVICES } from './compatible.js';

/**
 * How the chat service's answer to one incoming-webhook post becomes a `DeliveryOutcome`. The
 * classes come from `classifyExchange`; what differs between the services is how each says what
 * went wrong, which of its words mean the webhook itself is gone, and where a 429 says how long to
 * wait (`SERVICE_ANSWERS`).
 *
 * | answer | outcome |
 * |---|---|
 * | 2xx | `delivered` |
 * | 429 | `throttled`, for the wait the service asks (1 s when it says none; at least 1 s) |
 * | a word that means the webhook is gone (Slack `channel_is_archived`, `no_service`, `invalid_token`…; Mattermost `web.incoming_webhook.invalid.app_error`, `…disabled.app_error`; Discord `10015 Unknown Webhook`, `50027 Invalid Webhook Token`, `10003 Unknown Channel`; Rocket.Chat `Invalid integration id or token provided.`, or its 401), and any 410 | `gone`: every later message would fail the same way until someone fixes the channel or the webhook, so the receiver is disabled rather than filling the dead-letter list |
 * | other 4xx (Slack `invalid_payload`, `invalid_blocks`; Mattermost `…parse_data.app_error`; Discord `50006 Cannot send an empty message`) | `rejected`: this message is dead-lettered with the service's words |
 * | 408, 5xx, network error, time-out | `retry` (with `retryAfterMs` when a 5xx carries `Retry-After`) |
 * | 3xx | `rejected`: a webhook URL that redirects is misconfigured |
 *
 * Reasons name the service, the status and its words, never the URL; the caller scrubs them too.
 */

export const DEFAULT_RETRY_AFTER_MS = 1_000;
export const MIN_RETRY_AFTER_MS = 1_000;

/**
 * The wait a `Retry-After` asks for: delta-seconds (`30`, also `1.5`) or an HTTP date; the default
 * when absent or unreadable; never below 1 s (a webhook takes about one message a second, so
 * asking again sooner only earns another 429). The receiver's `max_hold` bounds it where the
 * delivery decision is made.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number {
  return atLeastMinimum(readRetryAfter(value, now, { fractions: true }));
}

function atLeastMinimum(ms: number | undefined): number {
  return Math.max(MIN_RETRY_AFTER_MS, ms ?? DEFAULT_RETRY_AFTER_MS);
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

/** What one service's answers mean. */
interface ServiceAnswers {
  /** What the service said, in its own words, for the reason. */
  said(body: string): string;
  /** True when `said` means the webhook itself no longer works. */
  gone(status: number, said: string): boolean;
  /** The wait a 429 asks for, in ms, from the body or the headers; undefined when it says none. */
  wait(answer: AnswerLike, now: number): number | undefined;
}

/** A JSON object body, or undefined. */
function jsonBody(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A service's message, cut to one line of at most 120 characters. */
function words(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

const retryAfterHeader = (answer: AnswerLike, now: number) =>
  readRetryAfter(answer.headers?.get('retry-after'), now, { fractions: true });

/** Slack errors that mean the webhook itself no longer works (revoked, workspace disabled). */
const SLACK_GONE = new Set([
  'channel_is_archived',
  'no_service',
  'no_team',
  'team_disabled',
  'invalid_token',
]);
/** Mattermost: the webhook was deleted (400), or incoming webhooks are turned off (501). */
const MATTERMOST_GONE = new Set([
  'web.incoming_webhook.invalid.app_error',
  'web.incoming_webhook.disabled.app_error',
]);
/** Discord's JSON error codes: Unknown Webhook, Unknown Channel, Invalid Webhook Token. */
const DISCORD_GONE = new Set([10015, 10003, 50027]);
const ROCKETCHAT_UNKNOWN = 'Invalid integration id or token provided.';

export const SERVICE_ANSWERS: Readonly<Record<CompatibleService, ServiceAnswers>> = {
  // Plain-text bodies: one error word.
  slack: {
    said: slackError,
    gone: (_status, said) => SLACK_GONE.has(said),
    wait: retryAfterHeader,
  },
  // `{"id": "web.incoming_webhook.invalid.app_error", "message": "Invalid webhook", "status_code": 400}`;
  // its rate limiter answers 429 `limit exceeded` with `Retry-After` in seconds.
  mattermost: {
    said: (body) => {
      const json = jsonBody(body);
      if (typeof json?.id !== 'string') return slackError(body);
      return typeof json.message === 'string' ? `${json.id} (${words(json.message)})` : json.id;
    },
    gone: (_status, said) => MATTERMOST_GONE.has(said.split(' ')[0] ?? ''),
    wait: retryAfterHeader,
  },
  // `{"message": "Unknown Webhook", "code": 10015}`; a 429 says `retry_after` in seconds in its
  // body (more precise than its `Retry-After` header, which is read when the body is not JSON).
  discord: {
    said: (body) => {
      const json = jsonBody(body);
      if (typeof json?.message !== 'string') return slackError(body);
      return typeof json.code === 'number' && json.code !== 0
        ? `${json.code} ${words(json.message)}`
        : words(json.message);
    },
    gone: (_status, said) => DISCORD_GONE.has(Number(said.split(' ')[0])),
    wait: (answer, now) => {
      const seconds = jsonBody(answer.body)?.retry_after;
      if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0)
        return Math.round(seconds * 1000);
      return retryAfterHeader(answer, now);
    },
  },
  // `{"success": false, "error": "…"}`; an unknown integration is a 404 (a 401 in later versions);
  // its rate limiter sends no Retry-After but `X-RateLimit-Reset`, the end of the window in epoch ms.
  rocketchat: {
    said: (body) => {
      const error = jsonBody(body)?.error;
      return typeof error === 'string' ? words(error) : slackError(body);
    },
    gone: (status, said) => status === 401 || said === ROCKETCHAT_UNKNOWN,
    wait: (answer, now) => {
      const reset = Number(answer.headers?.get('x-ratelimit-reset'));
      if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset - now);
      return retryAfterHeader(answer, now);
    },
  },
};

/** The outcome of a post that got an answer from `service`. */
export function outcomeOfAnswer(
  answer: AnswerLike,
  now: number = Date.now(),
  service: CompatibleService = 'slack',
): DeliveryOutcome {
  const { status } = answer;
  const kind = classifyExchange(status);
  if (kind === 'success') return { kind: 'delivered', status };
  const reading = SERVICE_ANSWERS[service];
  const error = reading.said(answer.body);
  const said = `${SERVICES[service].name} answered ${status} ${error}`;
  if (kind === 'throttled') {
    const retryAfterMs = atLeastMinimum(reading.wait(answer, now));
    return { kind: 'throttled', status, retryAfterMs, reason: `${said}; retry after ${retryAfterMs} ms` };
  }
  if (kind === 'gone' || (kind !== 'redirect' && reading.gone(status, error))) {
    return { kind: 'gone', status, reason: said };
  }
  const retryAfter = answer.headers?.get('retry-after');
  switch (kind) {
    case 'timeout':
    case 'gateway':
    case 'server_error':
      return retryAfter
        ? { kind: 'retry', status, reason: said, retryAfterMs: parseRetryAfter(retryAfter, now) }
        : { kind: 'retry', status, reason: said };
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
  service?: CompatibleService;
}

/** The outcome of a post that threw: an HTTP error the library raised, or no answer at all. */
export function outcomeOfError(error: unknown, context: FailureContext): DeliveryOutcome {
  const service = context.service ?? 'slack';
  if (error instanceof IncomingWebhookHTTPError) {
    return outcomeOfAnswer({ status: error.statusCode, body: error.body ?? '' }, Date.now(), service);
  }
  const name = SERVICES[service].name;
  const cause = error instanceof IncomingWebhookRequestError ? error.original : error;
  if (cause instanceof Error && cause.name === 'TimeoutError') {
    return { kind: 'retry', reason: `no answer from ${name} within ${context.timeoutMs} ms` };
  }
  if (context.aborted) return { kind: 'retry', reason: `delivery aborted before ${name} answered` };
  return { kind: 'retry', reason: `could not reach ${name}: ${describeNetworkError(cause)}` };
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
