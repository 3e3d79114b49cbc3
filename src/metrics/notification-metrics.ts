import type { Counter, Histogram } from 'prom-client';
import type { FlusherHooks } from '../notifiers/aggregation/flusher.js';
import type { DeliveryHook, DeliveryReport } from '../notifiers/delivery/delivery-worker.js';
import type { DispatchHooks, Suppressed } from '../notifiers/dispatch/dispatcher.js';
import type { Notification, Notifier } from '../notifiers/notifier.js';

/**
 * Notification metrics:
 * - the dispatcher's and the flusher's `onSuppressed` (a muted event, once per event) and the flusher's
 *   `onHandedOff` (a notification on its receiver's delivery queue);
 * - the delivery worker's `onOutcome`, once per attempt: outcome and send duration;
 * - `instrumentNotifier`, a wrapper around each receiver's notifier that sees the whole
 *   notification, for the end-to-end delay: oldest event's `time` (its observation) → delivered.
 *   Reminders are left out (their events are old on purpose).
 */

export const DELIVERY_OUTCOMES = ['delivered', 'retry', 'throttled', 'rejected', 'gone'] as const;
export const SUPPRESSION_REASONS = ['silenced', 'maintenance', 'inhibited'] as const;

export interface NotificationMetricsOptions {
  queued: Counter<'receiver'>;
  suppressed: Counter<'reason'>;
  outcomes: Counter<'receiver' | 'outcome'>;
  delivery: Histogram<'receiver'>;
  send: Histogram<'receiver'>;
  now: () => number;
}

export type NotificationHooks = Required<Pick<DispatchHooks, 'onSuppressed'>> &
  Required<Pick<FlusherHooks, 'onHandedOff'>>;

export interface NotificationMetrics {
  hooks: NotificationHooks;
  onOutcome: DeliveryHook;
  instrumentNotifier(notifier: Notifier): Notifier;
}

function oldestEventMs(notification: Notification): number | undefined {
  let oldest: number | undefined;
  for (const event of notification.events ?? []) {
    const ms = Date.parse(event.time);
    if (Number.isFinite(ms) && (oldest === undefined || ms < oldest)) oldest = ms;
  }
  return oldest;
}

export function createNotificationMetrics(options: NotificationMetricsOptions): NotificationMetrics {
  const { now } = options;
  return {
    hooks: {
      onSuppressed(suppressed: Suppressed) {
        options.suppressed.inc({ reason: suppressed.reason });
      },
      onHandedOff(notification: Notification) {
        options.queued.inc({ receiver: notification.receiver });
      },
    },
    onOutcome(report: DeliveryReport) {
      options.outcomes.inc({ receiver: report.receiver, outcome: report.outcome.kind });
      options.send.observe({ receiver: report.receiver }, Math.max(0, report.latencyMs) / 1000);
    },
    instrumentNotifier(notifier: Notifier): Notifier {
      const wrapped: Notifier = {
        kind: notifier.kind,
        name: notifier.name,
        async deliver(notification, deliveryOptions) {
          const outcome = await notifier.deliver(notification, deliveryOptions);
          if (outcome.kind === 'delivered' && !notification.reminder) {
            const since = oldestEventMs(notification);
            if (since !== undefined) {
              options.delivery.observe(
                { receiver: notification.receiver },
                Math.max(0, now() - since) / 1000,
              );
            }
          }
          return outcome;
        },
      };
      if (notifier.close) wrapped.close = () => notifier.close?.() ?? Promise.resolve();
      return wrapped;
    },
  };
}

/** The daemon's notification-step hooks (tests' own, if any) plus the metrics' ones. */
export function withNotificationHooks<H extends DispatchHooks & FlusherHooks>(
  own: H | undefined,
  metrics: NotificationHooks,
): H & NotificationHooks {
  return {
    ...(own as H),
    onSuppressed(suppressed: Suppressed) {
      metrics.onSuppressed(suppressed);
      own?.onSuppressed?.(suppressed);
    },
    onHandedOff(notification: Notification) {
      metrics.onHandedOff(notification);
      own?.onHandedOff?.(notification);
    },
  };
}
