import { z } from 'zod';
import { entityOf } from '../events/describe.js';
import type { FleetEvent, Severity } from '../events/types.js';
import { durationField } from '../lib/fields.js';
import type { RedisClient } from '../lib/redis-connection.js';
import type { RetryPolicy, RetryPolicyOverrides } from '../lib/retry-policy.js';
import { truncate } from '../lib/text.js';
import type { Logger } from '../log/logger.js';
import type { SecretRegistry } from '../log/secrets.js';

/**
 * The contract between routing (which decides who hears about what, and groups events) and
 * delivery (one notifier per receiver kind). A notifier never decides whether to send, only how.
 */

/** One message to one receiver: the events a route grouped together. */
export interface Notification {
  /** Stable: the idempotency key of this delivery (webhook-id for webhooks, dedup for Slack). */
  id: string;
  /** Receiver name from the config. */
  receiver: string;
  /** The group this notification belongs to, e.g. `type=vehicle.vpn.disconnected`. */
  groupKey: string;
  /** Values of the route's `group_by` labels for this group. */
  groupLabels: Record<string, string>;
  /** `resolved` when every event in it resolves an incident; otherwise `firing`. */
  status: 'firing' | 'resolved';
  /** The highest severity among the events. */
  severity: Severity;
  /** At least one event, oldest first. */
  events: FleetEvent[];
  /** Set on `repeat_interval` reminders of incidents that still fire. */
  reminder?: { firstNotifiedAt: string; count: number };
  /** ISO 8601 time the notification was put together. */
  createdAt: string;
}

/** What one delivery attempt came to. The delivery worker turns it into retry, hold, or dead letter. */
export type DeliveryOutcome =
  | { kind: 'delivered'; status?: number }
  /** Transient (5xx, network, time-out, 502/504 for webhooks): retry with backoff and jitter. */
  | { kind: 'retry'; reason: string; status?: number; retryAfterMs?: number }
  /** The receiver asks us to slow down (429): hold this receiver for `retryAfterMs`, not an attempt. */
  | { kind: 'throttled'; reason: string; status?: number; retryAfterMs: number }
  /** Permanent (Slack 400/403/404, webhook 4xx): dead-letter now with the reason. */
  | { kind: 'rejected'; reason: string; status?: number }
  /** The receiver is gone for good (webhook 410, Slack `channel_is_archived`): disable it. */
  | { kind: 'gone'; reason: string; status?: number };

export interface DeliveryOptions {
  /** 1-based attempt number. */
  attempt: number;
  signal?: AbortSignal;
}

export interface Notifier {
  readonly kind: string;
  readonly name: string;
  /** Never throws for a delivery problem: every failure is an outcome. Reasons carry no secret. */
  deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome>;
  close?(): Promise<void>;
}

export interface NotifierDeps {
  logger: Logger;
  /** The notifier registers its kind's `secrets(config)` here, and scrubs its reasons with it. */
  secrets: SecretRegistry;
  /** `console.url`, when set: messages may link to the console's pages (`consolePageUrl`). */
  consoleUrl?: string;
  /**
   * Redis, for a kind that keeps state of its own between deliveries (the alerts an Alertmanager
   * receiver re-sends). Absent where a notifier is built without Redis; a kind that needs it
   * refuses to be built without it.
   */
  redis?: ReceiverRedis;
}

/**
 * What a receiver may keep in Redis: the delivery connection, shared by every receiver of the
 * process, and the one key that is this receiver's own (`{p}:<kind>:<receiver>`, store/keys.ts).
 * Every replica's notifier of the receiver sees the same key.
 */
export interface ReceiverRedis {
  connection: RedisClient;
  key: string;
}

/**
 * One receiver kind: its config schema (an object with `kind: <literal>` and `name`), how to build
 * it, and everything else that differs by kind. Config checking, masking, secret registration and
 * delivery ask the kind's factory instead of testing `kind`.
 */
/** What every receiver's config has, whatever its kind. */
export interface ReceiverBase {
  kind: string;
  name: string;
  /** `max_hold` in ms: the longest a receiver's own `Retry-After` may hold it. */
  max_hold: number;
}

export interface NotifierFactory<Config extends ReceiverBase = ReceiverBase> {
  readonly kind: string;
  readonly configSchema: z.ZodType<Config>;
  create(config: Config, deps: NotifierDeps): Notifier;
  /** The config as `config check` prints it: secrets replaced. */
  mask(config: Config): Config;
  /** Every secret value in the config (URL, signing secrets, header values), for scrubbing. */
  secrets(config: Config): string[];
  /**
   * How the delivery worker retries a `retry` outcome of this receiver; `overrides` replace the
   * kind's defaults (tests).
   */
  retryPolicy(config: Config, overrides?: RetryPolicyOverrides): RetryPolicy;
}

/** The `name` every receiver config has: what routes refer to and what names its queue. */
export const receiverNameSchema = z
  .string({ error: 'must be the receiver name routes refer to' })
  .min(1, { error: 'must not be empty' });

export const DEFAULT_MAX_HOLD_MS = 5 * 60_000;
export const MIN_MAX_HOLD_MS = 1_000;
export const MAX_MAX_HOLD_MS = 24 * 3_600_000;

/**
 * `max_hold`, which every receiver kind has: the longest wait a receiver may impose on itself
 * through `Retry-After` (429, 503, …). A longer one is cut to it, so one answer of a receiver in
 * trouble (`Retry-After: 99999999`) cannot stop its notifications for days. The receiver's own
 * retry policy (a webhook's `retry_schedule`) is the operator's and is not cut.
 */
export const maxHoldSchema = durationField(MIN_MAX_HOLD_MS, MAX_MAX_HOLD_MS).default(DEFAULT_MAX_HOLD_MS);

/**
 * What every notifier logs about one attempt; `startedAt` is `performance.now()` before sending.
 * The caller adds the reason (and whatever else its kind knows) when the attempt failed.
 */
export function attemptLogFields(
  notification: Notification,
  options: DeliveryOptions,
  outcome: DeliveryOutcome,
  startedAt: number,
) {
  return {
    notification: notification.id,
    attempt: options.attempt,
    events: notification.events.length,
    outcome: outcome.kind,
    status: outcome.status,
    durationMs: Math.round(performance.now() - startedAt),
  };
}

/**
 * Links from a message into the web console (`console.url`): the console's hash routes
 * (`#/incidents`, `#/incidents/<id>`, `#/vehicle/<id>`, `#/robot/<id>`). One event links to its
 * vehicle or robot (an acknowledgement to its incident); a group to the Incidents page, and to the
 * entity too when every event is about the same one. A link too long to stay readable is left out.
 * Each kind writes them in its own markup (Slack's `<url|label>`, an email's `<a href>`).
 */

/** Longest link kept (a message line is for reading). */
export const MAX_LINK_LENGTH = 500;

const ENTITY_PAGES = new Set(['vehicle', 'robot']);

export interface ConsoleLink {
  url: string;
  label: string;
}

/**
 * `<base>/#/<page>/<param>…`, each part percent-encoded as the console's hash router reads it.
 * Every kind that links into the console builds its links with this.
 */
export function consolePageUrl(base: string, page: string, ...params: string[]): string {
  return `${base}/#/${[page, ...params.map((param) => encodeURIComponent(param))].join('/')}`;
}

function linkOfSubject(base: string, event: FleetEvent): ConsoleLink | undefined {
  const { kind, id, noun } = entityOf(event.subject);
  if (id === '' || kind === '') return undefined;
  if (ENTITY_PAGES.has(kind)) return { url: consolePageUrl(base, kind, id), label: `${noun.one} ${id}` };
  if (kind === 'incident') return { url: consolePageUrl(base, 'incidents', id), label: 'the incident' };
  return undefined;
}

/** The console pages a notification links to, given `console.url` as `base`. */
export function consoleLinks(
  notification: Notification,
  base: string,
  silence?: SilenceSource,
): ConsoleLink[] {
  const events = notification.events;
  const first = events[0];
  if (!first) return [];
  const links: ConsoleLink[] = [];
  if (events.length > 1) links.push({ url: consolePageUrl(base, 'incidents'), label: 'incidents' });
  if (events.every((event) => event.subject === first.subject)) {
    const link = linkOfSubject(base, first);
    if (link) links.push(link);
  }
  const silenceLink = silence ? silenceUrl(base, silence.firing, silence.comment) : undefined;
  if (silenceLink) links.push({ url: silenceLink, label: 'silence' });
  return links.filter((link) => link.url.length <= MAX_LINK_LENGTH);
}

/** What a silence link covers: the notification's firing events, and the comment it suggests. */
export interface SilenceSource {
  firing: readonly FleetEvent[];
  comment: string;
}

/** Most values of one label a silence link names; with more, the label is left out. */
export const SILENCE_LINK_VALUES = { type: 5, subject: 10 } as const;
/** The comment suggested in a silence link is cut to this many characters. */
const SILENCE_COMMENT_LENGTH = 120;

/**
 * The console's New silence form with its matchers filled in from what fires:
 * `#/silences/new?matchers=type%3D…&matchers=subject%3D…&comment=…` (one `label=value` per
 * `matchers`, as the form takes them). Subjects are left out when naming them would make the link
 * too long, types when there are too many; nothing to match (only resolutions or
 * acknowledgements) is no link. The person still reads the form and says why before it is created.
 */
export function silenceUrl(base: string, firing: readonly FleetEvent[], comment: string): string | undefined {
  const muted = firing.filter((event) => entityOf(event.subject).kind !== 'incident');
  const values = (label: keyof typeof SILENCE_LINK_VALUES) => {
    const distinct = [...new Set(muted.map((event) => (label === 'type' ? event.type : event.subject)))];
    return distinct.length <= SILENCE_LINK_VALUES[label] ? distinct.map((value) => `${label}=${value}`) : [];
  };
  const types = values('type');
  const subjects = values('subject');
  const text = truncate(comment, SILENCE_COMMENT_LENGTH);
  for (const matchers of [[...types, ...subjects], types]) {
    if (matchers.length === 0) continue;
    const query = new URLSearchParams([
      ...matchers.map((line): [string, string] => ['matchers', line]),
      ['comment', text],
    ]);
    const url = `${consolePageUrl(base, 'silences', 'new')}?${query}`;
    if (url.length <= MAX_LINK_LENGTH) return url;
  }
  return undefined;
}

/**
 * The one log line of an attempt: debug when it was delivered, a warning with the reason (and the
 * wait the receiver asked for) when not.
 */
export function logAttempt(
  logger: Logger,
  attempt: {
    notification: Notification;
    options: DeliveryOptions;
    outcome: DeliveryOutcome;
    startedAt: number;
  },
  messages: { delivered: string; failed: string },
): void {
  const { notification, options, outcome, startedAt } = attempt;
  const fields = attemptLogFields(notification, options, outcome, startedAt);
  if (outcome.kind === 'delivered') {
    logger.debug(fields, messages.delivered);
  } else {
    const retryAfterMs = 'retryAfterMs' in outcome ? outcome.retryAfterMs : undefined;
    logger.warn({ ...fields, retryAfterMs, reason: outcome.reason }, messages.failed);
  }
}
