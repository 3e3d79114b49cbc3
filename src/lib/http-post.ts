import { Agent, type Dispatcher, errors, request } from 'undici';
import { readBounded } from './http-body.js';
import { linkedSignal } from './linked-signal.js';

/**
 * One POST to a receiver, the way every receiver kind that talks HTTP itself sends: a whole-request
 * time-out (connect, send, answer), the caller's signal (a shutdown) on top, and the answer read
 * within bounds. What came of it is a value, never a throw, for the kind to word as its outcome.
 */

/** Bytes of a non-2xx answer kept (for a reason); the rest is read and dropped, up to 1 MiB. */
export const KEPT_BYTES = 4_096;

export type PostResult =
  /** `text` is the start of the body of a non-2xx answer; empty for a 2xx. */
  | { kind: 'answer'; status: number; retryAfter: string | undefined; text: string }
  /** No answer within the time-out. */
  | { kind: 'timeout' }
  /** The caller's signal ended it first. */
  | { kind: 'cancelled' }
  /** undici refused to send it (a header or URL it will never accept). */
  | { kind: 'unsendable'; error: unknown }
  /** No answer: refused, reset, name not resolved, … */
  | { kind: 'network'; error: unknown };

export interface PostRequest {
  headers: Record<string, string>;
  body: string | Buffer;
  signal?: AbortSignal | undefined;
}

export class ReceiverPoster {
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  #closed: Promise<void> | undefined;

  /** `dispatcher`: where requests go; by default an Agent of the poster's own, closed by `close()`. */
  constructor(timeoutMs: number, dispatcher?: Dispatcher) {
    this.#timeoutMs = timeoutMs;
    this.#ownsDispatcher = dispatcher === undefined;
    this.#dispatcher =
      dispatcher ??
      new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  }

  async post(url: string, { headers, body, signal }: PostRequest): Promise<PostResult> {
    const linked = linkedSignal([signal]);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      linked.abort();
    }, this.#timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        signal: linked.signal,
        dispatcher: this.#dispatcher,
      });
      const success = response.statusCode >= 200 && response.statusCode < 300;
      const text = await readBounded(response.body, success ? 0 : KEPT_BYTES);
      const retryAfter = response.headers['retry-after'];
      return {
        kind: 'answer',
        status: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        text,
      };
    } catch (error) {
      if (timedOut || isTimeoutError(error)) return { kind: 'timeout' };
      if (signal?.aborted) return { kind: 'cancelled' };
      if (error instanceof errors.InvalidArgumentError) return { kind: 'unsendable', error };
      return { kind: 'network', error };
    } finally {
      clearTimeout(timer);
      linked.release();
    }
  }

  /** Closes the connection pool (when the poster made it). Safe to call more than once. */
  close(): Promise<void> {
    this.#closed ??= this.#ownsDispatcher ? this.#dispatcher.close() : Promise.resolve();
    return this.#closed;
  }
}

/** True for an undici time-out (connect, headers, body) or an aborted `AbortSignal.timeout`. */
function isTimeoutError(error: unknown): boolean {
  return (
    error instanceof errors.ConnectTimeoutError ||
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError ||
    (error instanceof Error && error.name === 'TimeoutError')
  );
}
