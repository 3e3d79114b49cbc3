import type { Dispatcher } from 'undici';
import { describeError } from '../../../lib/http-body.js';
import { ReceiverPoster } from '../../../lib/http-post.js';
import type { Logger } from '../../../log/logger.js';
import type { SecretRegistry } from '../../../log/secrets.js';
import { VERSION } from '../../../version.js';
import type {
  DeliveryOptions,
  DeliveryOutcome,
  Notification,
  Notifier,
  NotifierDeps,
} from '../../notifier.js';
import { logAttempt } from '../../notifier.js';
import { AlertStore } from './alert-store.js';
import {
  type AlertContext,
  incidentIds,
  type PostableAlert,
  planAlerts,
  postable,
  removedSubject,
} from './alerts.js';
import { type AlertmanagerReceiverConfig, alertmanagerSecrets, alertsUrl, authorization } from './config.js';
import { type BatchResult, batchOutcome, type PeerAnswer } from './outcome.js';

/**
 * Pushes incidents to Alertmanager's `POST /api/v2/alerts` the way Prometheus does: every alert
 * of a notification in one request (at most `MAX_BATCH`), to every configured peer, and every
 * alert still firing pushed again each `resend_interval` with an `endsAt` `RESOLVE_WINDOW`
 * intervals ahead. Alertmanager ends an alert that is not pushed again by its `endsAt`, so an
 * alert whose fleetwatch is gone resolves by itself, and a peer that missed a push (restarted, cut
 * off) gets the alert back within an interval. Every replica re-sends: the same alerts twice is
 * what a Prometheus HA pair does, and Alertmanager merges them (same labels, same alert).
 *
 * The alerts pushed are kept in Redis (`AlertStore`), written after a peer accepted them: firing
 * ones until they resolve, resolved ones for one window more (pushed with their `endsAt`, so a
 * re-send that crossed the resolution is corrected at the next interval).
 *
 * Never throws: every problem is an outcome. URLs hold no credential (the config refuses them),
 * so peers are logged by URL; the password or token is registered with `deps.secrets`.
 */

/** A firing alert's `endsAt` is this many `resend_interval`s ahead (Prometheus: 4 × resend delay). */
export const RESOLVE_WINDOW = 4;
/** Most alerts in one POST (a notification or a re-send round beyond it takes several). */
export const MAX_BATCH = 1_000;
export interface AlertmanagerNotifierOptions {
  /** Epoch ms. */
  now?: () => number;
  /** Replaces `resend_interval` (tests: the config's minimum is 10 s). */
  resendIntervalMs?: number;
  /** Where requests go; by default an Agent of the notifier's own, closed by `close()`. */
  dispatcher?: Dispatcher;
  /** Called after each re-send round (tests wait on it). */
  onResend?: (round: { alerts: number; accepted: boolean }) => void;
}

export class AlertmanagerNotifier implements Notifier {
  readonly kind = 'alertmanager';
  readonly name: string;
  readonly #config: AlertmanagerReceiverConfig;
  readonly #store: AlertStore;
  readonly #logger: Logger;
  readonly #secrets: SecretRegistry;
  readonly #consoleUrl: string | undefined;
  readonly #now: () => number;
  readonly #intervalMs: number;
  readonly #poster: ReceiverPoster;
  readonly #headers: Record<string, string>;
  readonly #peers: readonly { url: string; target: string }[];
  readonly #onResend: AlertmanagerNotifierOptions['onResend'];
  readonly #stopping = new AbortController();
  readonly #timer: NodeJS.Timeout;
  #resending: Promise<void> | undefined;
  #closed: Promise<void> | undefined;

  constructor(
    config: AlertmanagerReceiverConfig,
    deps: NotifierDeps,
    options: AlertmanagerNotifierOptions = {},
  ) {
    if (!deps.redis) {
      throw new Error(
        `receiver ${config.name}: an alertmanager receiver keeps its alerts in Redis, and none was given`,
      );
    }
    this.name = config.name;
    this.#config = config;
    this.#store = new AlertStore(deps.redis);
    this.#secrets = deps.secrets;
    for (const secret of alertmanagerSecrets(config)) deps.secrets.add(secret);
    this.#logger = deps.logger.child({ receiver: config.name, receiverKind: 'alertmanager' });
    this.#consoleUrl = deps.consoleUrl;
    this.#now = options.now ?? Date.now;
    this.#intervalMs = options.resendIntervalMs ?? config.resend_interval;
    this.#onResend = options.onResend;
    this.#poster = new ReceiverPoster(config.timeout, options.dispatcher);
    const auth = authorization(config);
    this.#headers = {
      'content-type': 'application/json',
      'user-agent': `fleetwatch/${VERSION}`,
      ...(auth === undefined ? {} : { authorization: auth }),
    };
    this.#peers = config.urls.map((url) => ({ url, target: alertsUrl(url) }));
    this.#timer = setInterval(() => {
      this.#resending ??= this.resend().finally(() => {
        this.#resending = undefined;
      });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  async deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    const started = performance.now();
    const outcome = await this.#deliver(notification, options);
    logAttempt(
      this.#logger,
      { notification, options, outcome, startedAt: started },
      { delivered: 'alerts delivered', failed: 'alerts not delivered' },
    );
    return outcome;
  }

  async #deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    if (options.signal?.aborted) return { kind: 'retry', reason: 'cancelled before sending' };
    let plan: ReturnType<typeof planAlerts>;
    try {
      const subjects = [
        ...new Set(notification.events.map(removedSubject).filter((subject) => subject !== undefined)),
      ];
      const stored = await this.#store.load(incidentIds(notification), subjects);
      plan = planAlerts(notification, stored, this.#context());
    } catch (error) {
      return { kind: 'retry', reason: `cannot read the alerts pushed before: ${this.#describe(error)}` };
    }
    if (plan.alerts.length === 0) return { kind: 'delivered' };
    let status: number | undefined;
    for (let start = 0; start < plan.alerts.length; start += MAX_BATCH) {
      const result = await this.#post(plan.alerts.slice(start, start + MAX_BATCH), options.signal);
      this.#logFailedPeers(result, 'a peer did not take the alerts');
      if (result.outcome.kind !== 'delivered') return this.#scrubbed(result.outcome);
      status ??= result.outcome.status;
    }
    try {
      await this.#store.save(plan.writes);
    } catch (error) {
      // Pushed, but not remembered for re-sending: this notification is tried again.
      return { kind: 'retry', reason: `cannot record the alerts pushed: ${this.#describe(error)}` };
    }
    return { kind: 'delivered', ...(status === undefined ? {} : { status }) };
  }

  /**
   * One re-send round: every stored alert, firing ones with a new `endsAt`, resolved ones as they
   * ended until their time is over (then dropped). Never throws; a round that cannot reach Redis
   * or any peer is logged and the next one tries again.
   */
  async resend(): Promise<void> {
    let alerts = 0;
    let accepted = true;
    const send = async (batch: PostableAlert[]) => {
      const result = await this.#post(batch, this.#stopping.signal);
      alerts += batch.length;
      this.#logFailedPeers(result, 'a peer did not take the re-sent alerts');
      if (result.outcome.kind !== 'delivered') accepted = false;
    };
    try {
      const context = this.#context();
      let pending: PostableAlert[] = [];
      for await (const page of this.#store.entries()) {
        if (this.#stopping.signal.aborted) return;
        for (const entry of page) {
          const over = entry.alert.keepUntil !== undefined && entry.alert.keepUntil <= context.now;
          if (over) await this.#store.dropIfUnchanged(entry);
          else pending.push(postable(entry.alert, context));
        }
        while (pending.length >= MAX_BATCH) {
          await send(pending.slice(0, MAX_BATCH));
          pending = pending.slice(MAX_BATCH);
        }
      }
      if (pending.length > 0 && !this.#stopping.signal.aborted) await send(pending);
    } catch (error) {
      accepted = false;
      this.#logger.warn({ reason: this.#describe(error) }, 'alerts not re-sent: Redis unreadable');
    }
    this.#onResend?.({ alerts, accepted });
  }

  #context(): AlertContext {
    return { now: this.#now(), windowMs: RESOLVE_WINDOW * this.#intervalMs, consoleUrl: this.#consoleUrl };
  }

  /** One batch to every peer at once. */
  async #post(alerts: readonly PostableAlert[], signal: AbortSignal | undefined): Promise<BatchResult> {
    const body = JSON.stringify(alerts);
    const answers = await Promise.all(this.#peers.map((peer) => this.#postTo(peer, body, signal)));
    return batchOutcome(answers, this.#now());
  }

  async #postTo(
    peer: { url: string; target: string },
    body: string,
    signal: AbortSignal | undefined,
  ): Promise<PeerAnswer> {
    const result = await this.#poster.post(peer.target, { headers: this.#headers, body, signal });
    switch (result.kind) {
      case 'answer':
        return {
          peer: peer.url,
          status: result.status,
          body: this.#secrets.scrub(result.text),
          retryAfter: result.retryAfter,
        };
      case 'timeout':
        return { peer: peer.url, failure: 'timeout', detail: '' };
      case 'cancelled':
        return { peer: peer.url, failure: 'network', detail: 'cancelled before an answer came' };
      default:
        return {
          peer: peer.url,
          failure: 'network',
          detail: `network error: ${this.#describe(result.error)}`,
        };
    }
  }

  #logFailedPeers(result: BatchResult, message: string): void {
    for (const { peer, outcome } of result.failed) {
      this.#logger.warn(
        { peer, outcome: outcome.kind, status: outcome.status, reason: this.#secrets.scrub(outcome.reason) },
        message,
      );
    }
  }

  #scrubbed(outcome: DeliveryOutcome): DeliveryOutcome {
    return outcome.kind === 'delivered'
      ? outcome
      : { ...outcome, reason: this.#secrets.scrub(outcome.reason) };
  }

  #describe(error: unknown): string {
    return this.#secrets.scrub(describeError(error));
  }

  /**
   * Stops the re-send loop and closes the connection pool. A round under way posts nothing more;
   * it is waited for at most `timeout` (a Redis command of it may wait for a Redis that is down).
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      clearInterval(this.#timer);
      this.#stopping.abort();
      if (this.#resending) {
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.#config.timeout);
        });
        await Promise.race([this.#resending.catch(() => {}), bound]);
        clearTimeout(timer);
      }
      await this.#poster.close();
    })();
    return this.#closed;
  }
}
