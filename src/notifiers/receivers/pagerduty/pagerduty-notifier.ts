import type { Dispatcher } from 'undici';
import { formatDuration } from '../../../lib/duration.js';
import { describeError, excerptOf } from '../../../lib/http-body.js';
import { ReceiverPoster } from '../../../lib/http-post.js';
import type { Logger } from '../../../log/logger.js';
import { REDACTED, type SecretRegistry } from '../../../log/secrets.js';
import { VERSION } from '../../../version.js';
import type {
  DeliveryOptions,
  DeliveryOutcome,
  Notification,
  Notifier,
  NotifierDeps,
} from '../../notifier.js';
import { logAttempt } from '../../notifier.js';
import { type EventResult, resultOfAnswer } from './answer.js';
import { DEFAULT_SEVERITY_MAP, type PagerDutyReceiverConfig, pagerDutySecrets } from './config.js';
import { type PlannedEvent, type PlanOptions, planEvents } from './events.js';
import { SendPacer } from './pacer.js';

const MINUTE_MS = 60_000;
const HEADERS = { 'content-type': 'application/json', 'user-agent': `fleetwatch/${VERSION}` };

export interface PagerDutyNotifierOptions {
  /** The pacing window (one minute); `events_per_minute` exchanges at most within it. */
  paceWindowMs?: number;
  /** Epoch ms, for `Retry-After` dates and the pacing. */
  now?: () => number;
  /** Where requests go; by default an Agent of the notifier's own, closed by `close()`. */
  dispatcher?: Dispatcher;
}

/**
 * Delivers a notification to PagerDuty's Events API v2 as one event per incident (see
 * `events.ts`), sent one after the other in the notification's order, each paced (`pacer.ts`).
 *
 * Delivery is at least once: when an event fails half-way through a notification (5xx, time-out,
 * 429), the outcome is that failure and the whole notification is sent again later, events that
 * already went included. PagerDuty deduplicates them by `dedup_key`: a repeated `trigger` of an open
 * alert is added to its log, a repeated `acknowledge` or `resolve` changes nothing. An event
 * PagerDuty refuses (400) does not stop the others; the notification then ends `rejected` (a dead
 * letter naming the refused events), since sending it again would be refused again.
 *
 * The routing key goes only into request bodies: it is registered with `deps.secrets` and cut out
 * of every reason, and log lines name the endpoint's origin only. Never throws.
 */
export class PagerDutyNotifier implements Notifier {
  readonly kind = 'pagerduty';
  readonly name: string;
  readonly #config: PagerDutyReceiverConfig;
  readonly #plan: PlanOptions;
  readonly #pacer: SendPacer;
  readonly #logger: Logger;
  readonly #secrets: SecretRegistry;
  readonly #now: () => number;
  readonly #poster: ReceiverPoster;

  constructor(config: PagerDutyReceiverConfig, deps: NotifierDeps, options: PagerDutyNotifierOptions = {}) {
    this.name = config.name;
    this.#config = config;
    this.#secrets = deps.secrets;
    for (const secret of pagerDutySecrets(config)) deps.secrets.add(secret);
    this.#logger = deps.logger.child({
      receiver: config.name,
      receiverKind: 'pagerduty',
      origin: new URL(config.url).origin,
    });
    this.#plan = {
      severityMap: { ...DEFAULT_SEVERITY_MAP, ...config.severity_map },
      changes: config.changes,
      consoleUrl: deps.consoleUrl,
    };
    this.#now = options.now ?? Date.now;
    this.#pacer = new SendPacer(config.events_per_minute, options.paceWindowMs ?? MINUTE_MS, this.#now);
    this.#poster = new ReceiverPoster(config.timeout, options.dispatcher);
  }

  async deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    const startedAt = performance.now();
    const outcome = this.#scrubbed(await this.#deliver(notification, options));
    logAttempt(
      this.#logger,
      { notification, options, outcome, startedAt },
      { delivered: 'pagerduty events accepted', failed: 'pagerduty delivery failed' },
    );
    return outcome;
  }

  /** Closes the connection pool (when the notifier made it). Safe to call more than once. */
  close(): Promise<void> {
    return this.#poster.close();
  }

  async #deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    let planned: PlannedEvent[];
    try {
      planned = planEvents(notification, this.#plan);
    } catch (error) {
      // Not a delivery problem (a bug building the events): never thrown, retried like one.
      return { kind: 'retry', reason: `could not build the events: ${this.#describe(error)}` };
    }
    const refused: string[] = [];
    let status: number | undefined;
    for (const [index, event] of planned.entries()) {
      const which = `event ${index + 1} of ${planned.length} (${event.event_action} ${event.dedup_key})`;
      try {
        await this.#pacer.ready(options.signal);
      } catch {
        return { kind: 'retry', reason: `cancelled before ${which} was sent` };
      }
      const result = await this.#send(event, options.signal);
      this.#pacer.ended();
      if (result.kind === 'stop') {
        const { outcome } = result;
        return outcome.kind === 'delivered' ? outcome : { ...outcome, reason: `${which}: ${outcome.reason}` };
      }
      status = result.status;
      if (result.kind === 'invalid') refused.push(`${which}: ${result.reason}`);
    }
    if (refused.length > 0) {
      const accepted = planned.length - refused.length;
      return {
        kind: 'rejected',
        status,
        reason: `PagerDuty refused ${refused.length} of ${planned.length} events (${accepted} accepted); ${refused.join('; ')}`,
      };
    }
    return status === undefined ? { kind: 'delivered' } : { kind: 'delivered', status };
  }

  async #send(event: PlannedEvent, signal: AbortSignal | undefined): Promise<EventResult> {
    const body = JSON.stringify({ routing_key: this.#config.routing_key, ...event });
    const result = await this.#poster.post(this.#config.url, { headers: HEADERS, body, signal });
    switch (result.kind) {
      case 'answer':
        return resultOfAnswer({
          status: result.status,
          body: this.#scrub(result.text),
          retryAfter: result.retryAfter,
          now: this.#now(),
        });
      case 'timeout':
        return this.#stop(`no answer from PagerDuty within ${formatDuration(this.#config.timeout)}`);
      case 'cancelled':
        return this.#stop('cancelled before PagerDuty answered');
      case 'unsendable':
        // A URL undici refuses: no retry will make it acceptable.
        return this.#stop(`cannot send the request: ${this.#describe(result.error)}`, 'rejected');
      case 'network':
        return this.#stop(`could not reach PagerDuty: ${this.#describe(result.error)}`);
    }
  }

  #stop(reason: string, kind: 'retry' | 'rejected' = 'retry'): EventResult {
    return { kind: 'stop', outcome: { kind, reason } };
  }

  /** A short, scrubbed account of an error. */
  #describe(error: unknown): string {
    return excerptOf(this.#scrub(describeError(error)));
  }

  /** The registry's scrubbing, and the routing key cut out even if the registry has forgotten it. */
  #scrub(text: string): string {
    return this.#secrets.scrub(text.split(this.#config.routing_key).join(REDACTED));
  }

  #scrubbed(outcome: DeliveryOutcome): DeliveryOutcome {
    return outcome.kind === 'delivered' ? outcome : { ...outcome, reason: this.#scrub(outcome.reason) };
  }
}
