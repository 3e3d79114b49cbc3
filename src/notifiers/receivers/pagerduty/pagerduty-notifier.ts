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
import { type PlannedEvent, type Step, stepsOf } from './events.js';
import { type FoldOptions, type FoldPlan, groupAlertKey, NO_FOLDS, planFolded } from './fold.js';
import { FoldStore } from './fold-store.js';
import { SendPacer } from './pacer.js';

const MINUTE_MS = 60_000;

/** How far one attempt got: events sent, refused, the last status. */
interface Sent {
  count: number;
  total: number;
  refused: string[];
  status?: number | undefined;
}
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
 * `events.ts`), sent one after the other in the notification's order, each paced (`pacer.ts`);
 * a storm of new incidents becomes one alert of its group (`fold.ts`), which the receiver's Redis
 * key remembers (`fold-store.ts`). Built without Redis (a test's notifier), it folds nothing.
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
  readonly #plan: FoldOptions;
  readonly #folds: FoldStore | undefined;
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
      // A fold that is not recorded could never be resolved: without Redis, nothing is folded.
      foldAbove: deps.redis ? config.fold_above : Number.POSITIVE_INFINITY,
    };
    this.#folds = deps.redis ? new FoldStore(deps.redis) : undefined;
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
    let plan: FoldPlan;
    try {
      const steps = stepsOf(notification);
      plan = planFolded(notification, this.#plan, await this.#foldState(notification, steps), steps);
    } catch (error) {
      // Redis out of reach, or a bug building the events: never thrown, retried.
      return { kind: 'retry', reason: `could not plan the events: ${this.#describe(error)}` };
    }
    const total = plan.alerts.length + plan.groups.length;
    const sent: Sent = { count: 0, refused: [], total };
    const stopped = await this.#sendAll(plan.alerts, sent, options.signal);
    if (stopped) return stopped;
    const folded = await this.#record(() => this.#folds?.fold(plan.fold), 'record the folded incidents');
    if (folded) return folded;
    for (const [group, incidents] of plan.fold) {
      // Once per storm and attempt: an operator reading the log learns why 300 incidents made one page.
      this.#logger.info(
        { notification: notification.id, group, incidents: incidents.length },
        'pagerduty: incidents folded into one alert of their group',
      );
    }
    const stoppedInGroups = await this.#sendAll(plan.groups, sent, options.signal);
    if (stoppedInGroups) return stoppedInGroups;
    const released = await this.#record(
      () => this.#folds?.release(plan.release),
      'forget the resolved folded incidents',
    );
    if (released) return released;
    if (sent.refused.length > 0) {
      const accepted = total - sent.refused.length;
      return {
        kind: 'rejected',
        status: sent.status,
        reason: `PagerDuty refused ${sent.refused.length} of ${total} events (${accepted} accepted); ${sent.refused.join('; ')}`,
      };
    }
    return sent.status === undefined ? { kind: 'delivered' } : { kind: 'delivered', status: sent.status };
  }

  async #foldState(notification: Notification, steps: readonly Step[]) {
    if (!this.#folds) return NO_FOLDS;
    const incidents = steps.flatMap((step) => (step.kind === 'incident' ? [step.steps.dedupKey] : []));
    return this.#folds.read(incidents, [groupAlertKey(notification)]);
  }

  /** A write to the fold record; its failure is the outcome (retried). */
  async #record(write: () => Promise<void> | undefined, what: string): Promise<DeliveryOutcome | undefined> {
    try {
      await write();
      return undefined;
    } catch (error) {
      return { kind: 'retry', reason: `could not ${what}: ${this.#describe(error)}` };
    }
  }

  /** Sends events one after the other; the outcome that stops them, or nothing when all went. */
  async #sendAll(
    planned: readonly PlannedEvent[],
    sent: Sent,
    signal: AbortSignal | undefined,
  ): Promise<DeliveryOutcome | undefined> {
    for (const event of planned) {
      sent.count += 1;
      const which = `event ${sent.count} of ${sent.total} (${event.event_action} ${event.dedup_key})`;
      try {
        await this.#pacer.ready(signal);
      } catch {
        return { kind: 'retry', reason: `cancelled before ${which} was sent` };
      }
      const result = await this.#send(event, signal);
      this.#pacer.ended();
      if (result.kind === 'stop') {
        const { outcome } = result;
        return outcome.kind === 'delivered' ? outcome : { ...outcome, reason: `${which}: ${outcome.reason}` };
      }
      sent.status = result.status;
      if (result.kind === 'invalid') sent.refused.push(`${which}: ${result.reason}`);
    }
    return undefined;
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
