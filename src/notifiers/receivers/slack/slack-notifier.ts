import { IncomingWebhook, type IncomingWebhookDefaultArguments } from '@slack/webhook';
import { Agent, type Dispatcher } from 'undici';
import type { Logger } from '../../../log/logger.js';
import { REDACTED, type SecretRegistry } from '../../../log/secrets.js';
import type {
  DeliveryOptions,
  DeliveryOutcome,
  Notification,
  Notifier,
  NotifierDeps,
} from '../../notifier.js';
import { logAttempt } from '../../notifier.js';
import { buildAttachmentMessage } from './attachments.js';
import { buildSlackMessage } from './blocks.js';
import { type CompatibleService, SERVICES, type ServiceProfile } from './compatible.js';
import { type SlackReceiverConfig, slackSecrets } from './config.js';
import { outcomeOfAnswer, outcomeOfError } from './outcome.js';
import { recordingFetch } from './recording-fetch.js';

export interface SlackNotifierOptions {
  /** Most events listed one per line in a group message (see `buildSlackMessage`). */
  maxListed?: number;
  /** Connection pool to use; by default the notifier owns one and closes it in `close()`. */
  dispatcher?: Dispatcher;
}

/**
 * Delivers notifications to one Slack incoming webhook through `@slack/webhook`, or to a
 * Slack-compatible one (`compatible:`): Block Kit for Slack, attachments for the services that do
 * not draw Block Kit, both from the same message model. The library is given no retries (the delivery worker retries, with backoff and Retry-After) and a `fetch` that
 * records Slack's answer, because the library reports a 429 without its `Retry-After`.
 *
 * Slack has no idempotency key for incoming webhooks: a post whose answer was lost (time-out) may
 * have been shown, and its retry shows it again. The message's context line carries the event id
 * (one event) or the notification id (a group), so a duplicate can at least be recognised.
 */
export class SlackNotifier implements Notifier {
  readonly kind = 'slack';
  readonly name: string;
  readonly #url: string;
  /** Where posts go: the URL, or Discord's `/slack` endpoint below it. */
  readonly #endpoint: string;
  readonly #service: CompatibleService;
  readonly #profile: ServiceProfile;
  readonly #timeoutMs: number;
  readonly #defaults: IncomingWebhookDefaultArguments;
  readonly #maxListed: number | undefined;
  readonly #consoleUrl: string | undefined;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #secrets: SecretRegistry;
  readonly #logger: Logger;

  constructor(config: SlackReceiverConfig, deps: NotifierDeps, options: SlackNotifierOptions = {}) {
    this.name = config.name;
    this.#url = config.url;
    this.#service = config.compatible;
    this.#profile = SERVICES[config.compatible];
    this.#endpoint = this.#profile.endpoint(config.url);
    this.#timeoutMs = config.timeout;
    this.#secrets = deps.secrets;
    for (const secret of slackSecrets(config)) deps.secrets.add(secret);
    this.#logger = deps.logger.child({
      receiver: config.name,
      receiverKind: 'slack',
      ...(config.compatible === 'slack' ? {} : { compatible: config.compatible }),
    });
    this.#maxListed = options.maxListed;
    this.#consoleUrl = deps.consoleUrl;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher = options.dispatcher ?? new Agent({ connections: 4, keepAliveTimeout: 30_000 });
    this.#defaults = {
      ...(config.username ? { username: config.username } : {}),
      ...(config.icon_emoji ? { icon_emoji: config.icon_emoji } : {}),
      ...(config.icon_url ? { icon_url: config.icon_url } : {}),
      ...(config.channel ? { channel: config.channel } : {}),
    };
  }

  async deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    const started = performance.now();
    const outcome = this.#scrubbed(await this.#post(notification, options));
    logAttempt(
      this.#logger,
      { notification, options, outcome, startedAt: started },
      { delivered: 'slack message delivered', failed: 'slack delivery failed' },
    );
    return outcome;
  }

  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  async #post(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    if (options.signal?.aborted) return { kind: 'retry', reason: 'delivery aborted before sending' };
    try {
      const messageOptions = {
        maxListed: this.#maxListed,
        ...(this.#consoleUrl === undefined ? {} : { consoleUrl: this.#consoleUrl }),
      };
      const message =
        this.#profile.payload === 'blocks'
          ? { ...buildSlackMessage(notification, messageOptions), unfurl_links: false, unfurl_media: false }
          : buildAttachmentMessage(notification, this.#profile.markup, messageOptions);
      const recorder = recordingFetch({ dispatcher: this.#dispatcher, signal: options.signal });
      const webhook = new IncomingWebhook(this.#endpoint, {
        ...this.#defaults,
        timeout: this.#timeoutMs,
        retryConfig: { retries: 0 },
        fetch: recorder.fetch,
      });
      try {
        await webhook.send(message);
      } catch (error) {
        const answer = recorder.last();
        if (answer) return outcomeOfAnswer(answer, Date.now(), this.#service);
        return outcomeOfError(error, {
          timeoutMs: this.#timeoutMs,
          aborted: options.signal?.aborted === true,
          service: this.#service,
        });
      }
      return { kind: 'delivered', status: recorder.last()?.status ?? 200 };
    } catch (error) {
      // Not a delivery problem (a bug building the message): never thrown, retried like one.
      return {
        kind: 'retry',
        reason: `could not send: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  /** Reasons pass through the registry and lose the URL even if the registry has forgotten it. */
  #scrubbed(outcome: DeliveryOutcome): DeliveryOutcome {
    if (outcome.kind === 'delivered') return outcome;
    const reason = this.#secrets.scrub(
      outcome.reason.split(this.#endpoint).join(REDACTED).split(this.#url).join(REDACTED),
    );
    return { ...outcome, reason };
  }
}
