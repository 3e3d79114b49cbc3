import type { z } from 'zod';
import type { FleetEvent, Severity } from '../events/types.js';
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
  /** Register every secret of the receiver (webhook URL, signing secrets) here. */
  secrets: SecretRegistry;
}

/** One receiver kind: its config schema (an object with `kind: <literal>` and `name`) and how to build it. */
export interface NotifierFactory<
  Config extends { kind: string; name: string } = { kind: string; name: string },
> {
  readonly kind: string;
  readonly configSchema: z.ZodType<Config>;
  create(config: Config, deps: NotifierDeps): Notifier;
  /** The config as `config check` prints it: secrets replaced. */
  mask(config: Config): Config;
}
