import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for PagerDuty's Events API v2 (`POST /v2/enqueue`), answering as it is
 * documented: 202 `{status: "success", message: "Event processed", dedup_key}` for a valid event,
 * 400 `{status: "invalid event", message: "Event object is invalid", errors: [...]}` for one that
 * breaks the rules below, 400 `Unrecognized object` for a body that is not JSON, 429 when more
 * events arrive within a window than its rate allows (off unless set), and whatever a test
 * scripts. It keeps PagerDuty's alerts by dedup key: a trigger opens one (or is added to the open
 * one), acknowledge and resolve change an open one and are ignored otherwise.
 *
 * The rules are written out here again on purpose rather than imported from the notifier, so the
 * notifier is checked against an independent reading of the documentation.
 */

export type EventAction = 'trigger' | 'acknowledge' | 'resolve';

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type ScriptedAnswer =
  | Reply
  /** Process the event as PagerDuty would (to script a failure after it). */
  | { process: true };

export const pagerDutyAnswers = {
  process: (): ScriptedAnswer => ({ process: true }),
  /** 429 as PagerDuty sends it: no Retry-After. */
  throttled: (headers: Record<string, string> = {}): Reply => ({
    status: 429,
    body: {
      status: 'throttle event',
      message: 'Requests for this service are arriving too quickly. Please retry later.',
    },
    headers,
  }),
  serverError: (): Reply => ({
    status: 500,
    body: { status: 'error', message: 'Internal Server Error' },
  }),
};

export interface ReceivedEvent {
  /** `Date.now()` when the request arrived. */
  at: number;
  path: string;
  raw: string;
  /** The parsed body; undefined when it did not parse. */
  body: unknown;
  /** What the stand-in found wrong with it; empty for a valid event. */
  errors: string[];
  status: number;
}

export interface Alert {
  dedupKey: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  /** Trigger events this alert took (the first, then the ones deduplicated into it). */
  triggers: number;
  summary: string;
  severity: string;
}

export interface StandinOptions {
  /** At most `events` requests within any `windowMs`; more are answered 429. */
  rate?: { events: number; windowMs: number };
}

const ACTIONS = new Set(['trigger', 'acknowledge', 'resolve']);
const SEVERITIES = new Set(['critical', 'error', 'warning', 'info']);
const MAX_SUMMARY = 1_024;
const MAX_DEDUP_KEY = 255;

function blank(value: unknown): boolean {
  return typeof value !== 'string' || value.trim() === '';
}

/** What PagerDuty would refuse in an event; empty when it is valid. */
export function validateEvent(event: unknown, routingKey: string): string[] {
  if (event === null || typeof event !== 'object' || Array.isArray(event))
    return ['Event object is not an object'];
  const {
    routing_key: key,
    event_action: action,
    dedup_key: dedup,
    payload,
    links,
    client_url: clientUrl,
  } = event as Record<string, unknown>;
  const errors: string[] = [];
  if (blank(key)) errors.push("'routing_key' is missing or blank");
  else if ((key as string).length !== 32)
    errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  else if (key !== routingKey) errors.push('Invalid routing key');
  if (typeof action !== 'string' || !ACTIONS.has(action)) {
    errors.push("'event_action' is invalid (must be one of trigger, acknowledge, resolve)");
  }
  if (dedup !== undefined && typeof dedup !== 'string') errors.push("'dedup_key' must be a string");
  if (typeof dedup === 'string' && dedup.length > MAX_DEDUP_KEY) {
    errors.push(`'dedup_key' is too long (maximum is ${MAX_DEDUP_KEY} characters)`);
  }
  if (action !== 'trigger' && blank(dedup)) errors.push("'dedup_key' is missing or blank");
  if (action === 'trigger') errors.push(...validatePayload(payload));
  if (links !== undefined) {
    if (!Array.isArray(links)) errors.push("'links' must be an array");
    else if (links.some((link) => blank((link as { href?: unknown } | null)?.href))) {
      errors.push("'links.href' is missing or blank");
    }
  }
  if (clientUrl !== undefined && blank(clientUrl)) errors.push("'client_url' must be a URL");
  return errors;
}

function validatePayload(payload: unknown): string[] {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    return ["'payload' is missing or blank"];
  const {
    summary,
    source,
    severity,
    timestamp,
    custom_details: details,
  } = payload as Record<string, unknown>;
  const errors: string[] = [];
  if (blank(summary)) errors.push("'payload.summary' is missing or blank");
  else if ([...(summary as string)].length > MAX_SUMMARY) {
    errors.push(`'payload.summary' is too long (maximum is ${MAX_SUMMARY} characters)`);
  }
  if (blank(source)) errors.push("'payload.source' is missing or blank");
  if (typeof severity !== 'string' || !SEVERITIES.has(severity)) {
    errors.push("'payload.severity' is invalid (must be one of critical, error, warning, info)");
  }
  if (timestamp !== undefined && (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp)))) {
    errors.push("'payload.timestamp' is not a valid ISO 8601 timestamp");
  }
  for (const field of ['component', 'group', 'class'] as const) {
    const value = (payload as Record<string, unknown>)[field];
    if (value !== undefined && typeof value !== 'string') errors.push(`'payload.${field}' must be a string`);
  }
  if (details !== undefined && (details === null || typeof details !== 'object')) {
    errors.push("'payload.custom_details' must be an object");
  }
  return errors;
}

export class PagerDutyStandin {
  readonly routingKey: string;
  readonly received: ReceivedEvent[] = [];
  /** Every alert ever opened, oldest first (a resolved key triggered again opens a new one). */
  readonly alerts: Alert[] = [];
  readonly #script: ScriptedAnswer[] = [];
  readonly #rate: StandinOptions['rate'];
  readonly #server = createServer((request, response) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = request.url ?? '';
      const received: ReceivedEvent = { at, path, raw, body: undefined, errors: [], status: 0 };
      const answer = this.#answer(received, request.method ?? '');
      received.status = answer.status;
      this.received.push(received);
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      response.end(JSON.stringify(answer.body));
    });
  });
  #url = '';

  private constructor(routingKey: string, options: StandinOptions) {
    this.routingKey = routingKey;
    this.#rate = options.rate;
  }

  /** Starts a stand-in on 127.0.0.1 with an ephemeral port and a random routing key of its own. */
  static async start(options: StandinOptions = {}): Promise<PagerDutyStandin> {
    const standin = new PagerDutyStandin(randomBytes(16).toString('hex'), options);
    await new Promise<void>((resolve, reject) => {
      standin.#server.once('error', reject);
      standin.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = standin.#server.address() as AddressInfo;
    standin.#url = `http://127.0.0.1:${port}/v2/enqueue`;
    return standin;
  }

  /** The enqueue endpoint, for the receiver's `url`. */
  get url(): string {
    return this.#url;
  }

  /** Answers for the next valid events, in order, instead of processing them. */
  enqueue(...answers: ScriptedAnswer[]): void {
    this.#script.push(...answers);
  }

  /** Alerts not resolved. */
  open(): Alert[] {
    return this.alerts.filter((alert) => alert.status !== 'resolved');
  }

  /** The most requests that arrived within any `windowMs` (by arrival time). */
  busiest(windowMs: number): number {
    const times = this.received.map((item) => item.at).sort((a, b) => a - b);
    let most = 0;
    let start = 0;
    for (let end = 0; end < times.length; end += 1) {
      while ((times[end] as number) - (times[start] as number) >= windowMs) start += 1;
      most = Math.max(most, end - start + 1);
    }
    return most;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(received: ReceivedEvent, method: string): Reply {
    if (received.path !== '/v2/enqueue' || method !== 'POST') {
      return { status: 404, body: { status: 'Not Found', message: 'Not Found' } };
    }
    if (this.#overRate(received.at)) return pagerDutyAnswers.throttled();
    try {
      received.body = JSON.parse(received.raw);
    } catch {
      received.errors = ['JSON parse error'];
      return {
        status: 400,
        body: {
          status: 'Unrecognized object',
          message: 'Event object format is unrecognized',
          errors: received.errors,
        },
      };
    }
    received.errors = validateEvent(received.body, this.routingKey);
    if (received.errors.length > 0) {
      return {
        status: 400,
        body: { status: 'invalid event', message: 'Event object is invalid', errors: received.errors },
      };
    }
    const scripted = this.#script.shift();
    if (scripted && !('process' in scripted)) return scripted;
    const dedupKey = this.#apply(received.body as Record<string, unknown>);
    return { status: 202, body: { status: 'success', message: 'Event processed', dedup_key: dedupKey } };
  }

  /** Counts this request against the rate: too many within the window before it? */
  #overRate(at: number): boolean {
    if (!this.#rate) return false;
    const { events, windowMs } = this.#rate;
    const within = this.received.filter((item) => item.path === '/v2/enqueue' && at - item.at < windowMs);
    return within.length >= events;
  }

  /** PagerDuty's alert bookkeeping for a valid event; returns the event's dedup key. */
  #apply(event: Record<string, unknown>): string {
    const dedupKey = typeof event.dedup_key === 'string' ? event.dedup_key : randomBytes(16).toString('hex');
    const current = this.alerts.findLast(
      (alert) => alert.dedupKey === dedupKey && alert.status !== 'resolved',
    );
    const payload = (event.payload ?? {}) as { summary?: string; severity?: string };
    switch (event.event_action) {
      case 'trigger':
        if (current) current.triggers += 1;
        else {
          this.alerts.push({
            dedupKey,
            status: 'triggered',
            triggers: 1,
            summary: payload.summary ?? '',
            severity: payload.severity ?? '',
          });
        }
        break;
      case 'acknowledge':
        if (current) current.status = 'acknowledged';
        break;
      case 'resolve':
        if (current) current.status = 'resolved';
        break;
    }
    return dedupKey;
  }
}
