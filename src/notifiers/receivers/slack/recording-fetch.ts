import type { FetchFunction } from '@slack/webhook';
import { type Dispatcher, fetch as undiciFetch } from 'undici';
import { linkedSignal } from '../../../lib/linked-signal.js';

/** The parts of Slack's answer that decide the outcome, which `@slack/webhook` does not expose. */
export interface RecordedResponse {
  status: number;
  statusText: string;
  headers: Headers;
  /** The body as text, cut at `maxBodyBytes`. */
  body: string;
}

export interface RecordingFetchOptions {
  dispatcher?: Dispatcher;
  /** Aborts the request besides the library's own time-out (the delivery worker's signal). */
  signal?: AbortSignal;
  /** Slack's answers are one word; a proxy's error page is cut here. Default 8 KiB. */
  maxBodyBytes?: number;
}

export interface RecordingFetch {
  fetch: FetchFunction;
  /** The response of the last request, once its body has been read. */
  last(): RecordedResponse | undefined;
}

/**
 * A `fetch` for `IncomingWebhook` that remembers the last response — status, headers (the
 * library fails on a 429 without showing `Retry-After`) and body — so the notifier can map it to
 * an outcome. Make one per delivery: the record is not shared between concurrent sends.
 *
 * Redirects are not followed (`manual`): a webhook URL that redirects is a misconfiguration,
 * reported with its status rather than as a network error. The response handed back carries no
 * `url`, so the webhook URL cannot travel further inside it.
 */
export function recordingFetch(options: RecordingFetchOptions = {}): RecordingFetch {
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024;
  let last: RecordedResponse | undefined;
  const fetch: FetchFunction = async (url, init) => {
    const linked = linkedSignal([init?.signal ?? undefined, options.signal]);
    let response: Awaited<ReturnType<typeof undiciFetch>>;
    let body: string;
    try {
      response = await undiciFetch(url, {
        method: init?.method ?? 'POST',
        headers: init?.headers,
        body: init?.body as string | undefined,
        redirect: 'manual',
        signal: linked.signal,
        dispatcher: options.dispatcher,
      });
      body = await readBody(response.body, maxBodyBytes);
    } finally {
      linked.release();
    }
    last = { status: response.status, statusText: response.statusText, headers: response.headers, body };
    return {
      ok: response.ok,
      status: response.status,
      statusText: response.statusText,
      url: '',
      headers: response.headers,
      text: async () => body,
      json: async () => JSON.parse(body) as unknown,
      arrayBuffer: async () => new TextEncoder().encode(body).buffer as ArrayBuffer,
    };
  };
  return { fetch, last: () => last };
}

async function readBody(stream: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!stream) return '';
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - bytes;
      text += decoder.decode(value.subarray(0, room), { stream: true });
      bytes += Math.min(value.byteLength, room);
      if (bytes >= maxBytes) {
        await reader.cancel().catch(() => {});
        break;
      }
    }
  } finally {
    reader.releaseLock();
  }
  return text + decoder.decode();
}
