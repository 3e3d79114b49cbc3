/**
 * What one HTTP exchange came to, in the classes every sender of fleetwatch (the upstream client,
 * the Slack and webhook receivers) builds its own policy on. The classes say what the answer
 * means, not what to do about it: a 408 is "too slow" for everyone, but only some senders retry it.
 *
 * | class | exchange |
 * |---|---|
 * | `success` | 2xx |
 * | `redirect` | 3xx |
 * | `auth` | 401, 403 |
 * | `not_found` | 404 |
 * | `timeout` | 408, or no answer in time |
 * | `gone` | 410 |
 * | `throttled` | 429 |
 * | `gateway` | 502, 503, 504: something between us and the service failed or is overloaded |
 * | `server_error` | any other status from 500 up |
 * | `client_error` | any other 4xx |
 * | `network` | no answer: refused, reset, name not resolved, … |
 * | `informational` | below 200: never a final answer over HTTP/1.1; here so the classification is total |
 */
export type AnswerClass =
  | 'success'
  | 'redirect'
  | 'auth'
  | 'not_found'
  | 'timeout'
  | 'gone'
  | 'throttled'
  | 'gateway'
  | 'server_error'
  | 'client_error'
  | 'network'
  | 'informational';

/** An exchange: the status of the answer, or why there was none. */
export type Exchange = number | 'timeout' | 'network';

const BY_STATUS: Readonly<Record<number, AnswerClass>> = {
  401: 'auth',
  403: 'auth',
  404: 'not_found',
  408: 'timeout',
  410: 'gone',
  429: 'throttled',
  502: 'gateway',
  503: 'gateway',
  504: 'gateway',
};

export function classifyExchange(exchange: Exchange): AnswerClass {
  if (exchange === 'timeout' || exchange === 'network') return exchange;
  const known = BY_STATUS[exchange];
  if (known) return known;
  if (exchange >= 500) return 'server_error';
  if (exchange >= 400) return 'client_error';
  if (exchange >= 300) return 'redirect';
  if (exchange >= 200) return 'success';
  return 'informational';
}

/** undici's codes for a connection, answer or body that did not come in time. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The exchange of a request that threw: `timeout` when nothing came in time (undici's time-outs,
 * `AbortSignal.timeout`), else `network` (refused, reset, name not resolved, …).
 */
export function exchangeOfError(error: unknown): 'timeout' | 'network' {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return (typeof code === 'string' && TIMEOUT_CODES.has(code)) || name === 'TimeoutError'
    ? 'timeout'
    : 'network';
}

/** A short account of an error for a reason or a log line: its code when it has one, then its message. */
export function describeError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' && message !== '' ? message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code} ${text}` : text;
}
