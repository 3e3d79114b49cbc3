import { formatDuration } from '../../../lib/duration.js';
import { classifyExchange } from '../../../lib/http-answer.js';
import { parseRetryAfter } from '../../../lib/retry-after.js';
import type { DeliveryOutcome } from '../../notifier.js';

/**
 * What the peers' answers to one batch of alerts come to (pure). Alertmanager peers gossip what
 * they receive, and fleetwatch pushes every firing alert again each `resend_interval`, so ONE
 * peer accepting is enough: a peer that missed the push is brought up to date by the next one.
 *
 * | answers | outcome |
 * |---|---|
 * | at least one peer 2xx | `delivered` |
 * | a peer 400 / 422 (Alertmanager refused the alerts: its message is in the reason), 401, 403, 404, 3xx, other 4xx | `rejected`: the same alerts would be refused again |
 * | 5xx, time-out, network error (any peer) | `retry` |
 * | every failing peer 429 with `Retry-After` (502, 503, 504 too) | `throttled` for the shortest wait asked |
 */

export type PeerAnswer =
  | { peer: string; status: number; body: string; retryAfter?: string | undefined }
  | { peer: string; failure: 'timeout' | 'network'; detail: string };

/** Longest piece of a peer's answer kept in a reason. */
export const MAX_SAID = 200;

/** A peer's answer in a line: Alertmanager answers a refusal with a JSON string or `{message}`. */
export function saidBy(body: string): string {
  let text = body.trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'string') text = parsed;
    else if (parsed !== null && typeof parsed === 'object') {
      const message = (parsed as { message?: unknown }).message;
      if (typeof message === 'string') text = message;
    }
  } catch {
    // Not JSON: the text as it is.
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim();
  return line.length <= MAX_SAID ? line : `${line.slice(0, MAX_SAID - 1)}…`;
}

/** One peer's answer as an outcome; the reason starts with the peer's URL (which holds no secret). */
export function peerOutcome(answer: PeerAnswer, now: number): DeliveryOutcome {
  if ('failure' in answer) {
    return {
      kind: 'retry',
      reason: `${answer.peer}: ${answer.failure === 'timeout' ? 'no answer in time' : answer.detail}`,
    };
  }
  const { status, peer } = answer;
  const kind = classifyExchange(status);
  if (kind === 'success') return { kind: 'delivered', status };
  const said = saidBy(answer.body);
  const reason = `${peer}: HTTP ${status}${said === '' ? '' : `: ${said}`}`;
  const retryAfterMs = parseRetryAfter(answer.retryAfter, now);
  switch (kind) {
    case 'throttled':
    case 'gateway':
      return retryAfterMs === undefined
        ? { kind: 'retry', status, reason }
        : {
            kind: 'throttled',
            status,
            retryAfterMs,
            reason: `${reason}; retry after ${formatDuration(retryAfterMs)}`,
          };
    case 'server_error':
    case 'timeout':
      return { kind: 'retry', status, reason };
    case 'auth':
      return { kind: 'rejected', status, reason: `${reason} (check basic_auth or bearer_token)` };
    case 'not_found':
      return { kind: 'rejected', status, reason: `${reason} (no /api/v2/alerts there: check urls)` };
    case 'redirect':
      return { kind: 'rejected', status, reason: `${reason} (redirects are not followed: check urls)` };
    default:
      return { kind: 'rejected', status, reason };
  }
}

export interface BatchResult {
  outcome: DeliveryOutcome;
  /** The peers that did not accept, with their outcome (for the log). */
  failed: { peer: string; outcome: Exclude<DeliveryOutcome, { kind: 'delivered' }> }[];
}

/** The outcome of one batch posted to every peer. */
export function batchOutcome(answers: readonly PeerAnswer[], now: number): BatchResult {
  const failed: BatchResult['failed'] = [];
  let accepted: DeliveryOutcome | undefined;
  for (const answer of answers) {
    const outcome = peerOutcome(answer, now);
    if (outcome.kind === 'delivered') accepted ??= outcome;
    else failed.push({ peer: answer.peer, outcome });
  }
  if (accepted) return { outcome: accepted, failed };
  const reason = `no Alertmanager accepted the alerts: ${failed.map((entry) => entry.outcome.reason).join('; ')}`;
  const rejected = failed.find((entry) => entry.outcome.kind === 'rejected');
  if (rejected) return { outcome: { ...rejected.outcome, reason }, failed };
  const throttles = failed.map((entry) => entry.outcome).filter((outcome) => outcome.kind === 'throttled');
  if (throttles.length === failed.length && throttles.length > 0) {
    const first = throttles.reduce((a, b) => (b.retryAfterMs < a.retryAfterMs ? b : a));
    return { outcome: { ...first, reason }, failed };
  }
  const status = failed.find((entry) => entry.outcome.status !== undefined)?.outcome.status;
  return { outcome: { kind: 'retry', reason, ...(status === undefined ? {} : { status }) }, failed };
}
