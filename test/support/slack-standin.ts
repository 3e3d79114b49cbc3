import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for a Slack incoming webhook, or for the Slack-compatible webhook of
 * Mattermost, Discord or Rocket.Chat (`SlackStandin.start('discord')`). It records every payload
 * with its arrival time, checks it against what the service renders (Slack: Block Kit within
 * Slack's limits; the others: attachments within Discord's embed limits, the strictest of them),
 * and answers a broken payload as that service does (Slack 400 `invalid_blocks` /
 * `invalid_payload`; Mattermost, Discord and Rocket.Chat their JSON errors); otherwise it answers
 * from a script of responses, the service's success once the script is used up. Posts to any
 * other path get the service's unknown-webhook answer. The limits and answers are written out
 * again on purpose rather than imported from the notifier, so the notifier is checked against an
 * independent reading of each service's documentation.
 */

export type StandinAnswer =
  | { status: number; body: string; headers?: Record<string, string> }
  /** Never answer: the request stays open until the client gives up or the stand-in closes. */
  | { hang: true };

/** Slack's answers, as its incoming webhooks send them (plain-text bodies). */
export const slackAnswers = {
  ok: (): StandinAnswer => ({ status: 200, body: 'ok' }),
  rateLimited: (retryAfter?: number | string): StandinAnswer => ({
    status: 429,
    body: 'rate_limited',
    headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
  }),
  invalidPayload: (): StandinAnswer => ({ status: 400, body: 'invalid_payload' }),
  userNotFound: (): StandinAnswer => ({ status: 400, body: 'user_not_found' }),
  actionProhibited: (): StandinAnswer => ({ status: 403, body: 'action_prohibited' }),
  channelNotFound: (): StandinAnswer => ({ status: 404, body: 'channel_not_found' }),
  channelIsArchived: (): StandinAnswer => ({ status: 410, body: 'channel_is_archived' }),
  rollupError: (): StandinAnswer => ({ status: 500, body: 'rollup_error' }),
  hang: (): StandinAnswer => ({ hang: true }),
};

/** Mattermost's answers: `ok`, or its JSON AppError (`id`, `message`, `status_code`). */
function mattermostError(status: number, id: string, message: string): StandinAnswer {
  return {
    status,
    body: JSON.stringify({
      id,
      message,
      detailed_error: '',
      request_id: 'standinrequest',
      status_code: status,
    }),
    headers: { 'content-type': 'application/json' },
  };
}

export const mattermostAnswers = {
  ok: (): StandinAnswer => ({ status: 200, body: 'ok' }),
  invalidWebhook: () => mattermostError(400, 'web.incoming_webhook.invalid.app_error', 'Invalid webhook.'),
  disabled: () =>
    mattermostError(
      501,
      'web.incoming_webhook.disabled.app_error',
      'Incoming webhooks have been disabled by the system admin.',
    ),
  noText: () => mattermostError(400, 'web.incoming_webhook.text.app_error', 'No text specified.'),
  parseError: () =>
    mattermostError(400, 'model.incoming_hook.parse_data.app_error', 'Unable to parse incoming data.'),
  /** Its rate limiter: plain text, `Retry-After` in seconds and the X-Ratelimit headers. */
  rateLimited: (retryAfter: number): StandinAnswer => ({
    status: 429,
    body: 'limit exceeded\n',
    headers: {
      'retry-after': String(retryAfter),
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(retryAfter),
    },
  }),
};

/** Discord's answers: JSON `{message, code}`; a 429 carries `retry_after` in seconds. */
function discordError(status: number, code: number, message: string): StandinAnswer {
  return { status, body: JSON.stringify({ message, code }), headers: { 'content-type': 'application/json' } };
}

export const discordAnswers = {
  ok: (): StandinAnswer => ({ status: 200, body: 'ok' }),
  unknownWebhook: () => discordError(404, 10015, 'Unknown Webhook'),
  invalidToken: () => discordError(401, 50027, 'Invalid Webhook Token'),
  emptyMessage: () => discordError(400, 50006, 'Cannot send an empty message'),
  invalidFormBody: () => discordError(400, 50035, 'Invalid Form Body'),
  rateLimited: (retryAfterSeconds: number): StandinAnswer => ({
    status: 429,
    body: JSON.stringify({
      message: 'You are being rate limited.',
      retry_after: retryAfterSeconds,
      global: false,
    }),
    headers: {
      'content-type': 'application/json',
      'retry-after': String(Math.ceil(retryAfterSeconds)),
      'x-ratelimit-scope': 'shared',
    },
  }),
};

/** Rocket.Chat's answers: JSON `{success, error}`; its rate limiter says when its window ends. */
function rocketchatError(status: number, error: string, headers: Record<string, string> = {}): StandinAnswer {
  return {
    status,
    body: JSON.stringify({ success: false, error }),
    headers: { 'content-type': 'application/json', ...headers },
  };
}

export const rocketchatAnswers = {
  ok: (): StandinAnswer => ({
    status: 200,
    body: JSON.stringify({ success: true }),
    headers: { 'content-type': 'application/json' },
  }),
  unknownIntegration: () => rocketchatError(404, 'Invalid integration id or token provided.'),
  disabled: () => rocketchatError(503, 'Service Unavailable'),
  rateLimited: (resetAt: number, seconds: number): StandinAnswer =>
    rocketchatError(
      429,
      `Error, too many requests. Please slow down. You must wait ${seconds} seconds before trying this endpoint again. [error-too-many-requests]`,
      { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetAt) },
    ),
};

export type StandinService = 'slack' | 'mattermost' | 'discord' | 'rocketchat';

export interface ReceivedPost {
  /** `Date.now()` when the request arrived. */
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** The parsed JSON body; undefined when it did not parse. */
  payload: unknown;
  /** Broken Slack limits; empty when the payload is acceptable. */
  problems: string[];
  /** The status the stand-in answered (undefined while hanging). */
  status?: number;
}

const LIMITS = {
  text: 40_000,
  blocks: 50,
  header: 150,
  sectionText: 3_000,
  fields: 10,
  field: 2_000,
  contextElements: 10,
  contextText: 3_000,
  blockId: 255,
};

/** Discord's embed limits: the strictest of the services that turn attachments into their own messages. */
const EMBED_LIMITS = {
  embeds: 10,
  title: 256,
  description: 4_096,
  fields: 25,
  name: 256,
  value: 1_024,
  total: 6_000,
};

/**
 * Everything a Slack-compatible service would not show of a payload of attachments: Block Kit
 * (none of them renders it), an attachment without colour or content, anything beyond the embed
 * limits; empty when it would be drawn whole.
 */
export function validateAttachmentsPayload(payload: unknown): string[] {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return ['not a JSON object'];
  const { blocks, attachments, text } = payload as {
    blocks?: unknown;
    attachments?: unknown;
    text?: unknown;
  };
  const problems: string[] = [];
  if (blocks !== undefined) problems.push('blocks: not rendered by this service');
  if (!Array.isArray(attachments) || attachments.length === 0) {
    if (typeof text !== 'string' || text === '') problems.push('no_text');
    return problems;
  }
  if (attachments.length > EMBED_LIMITS.embeds)
    problems.push(`attachments: ${attachments.length} > ${EMBED_LIMITS.embeds}`);
  let total = 0;
  attachments.forEach((attachment: unknown, index) => {
    const where = `attachments[${index}]`;
    if (attachment === null || typeof attachment !== 'object') {
      problems.push(`${where}: not an object`);
      return;
    }
    const { color, title, text: body, fields } = attachment as Record<string, unknown>;
    if (typeof color !== 'string' || !/^#[0-9a-f]{6}$/i.test(color))
      problems.push(`${where}: color must be #rrggbb`);
    if (typeof title !== 'string' || title === '') problems.push(`${where}: no title`);
    else if (title.length > EMBED_LIMITS.title)
      problems.push(`${where}: title ${title.length} > ${EMBED_LIMITS.title}`);
    total += typeof title === 'string' ? title.length : 0;
    if (body !== undefined) {
      if (typeof body !== 'string' || body === '') problems.push(`${where}: text must be a non-empty string`);
      else if (body.length > EMBED_LIMITS.description)
        problems.push(`${where}: text ${body.length} > ${EMBED_LIMITS.description}`);
      total += typeof body === 'string' ? body.length : 0;
    }
    if (fields !== undefined) {
      if (!Array.isArray(fields)) problems.push(`${where}: fields not an array`);
      else {
        if (fields.length > EMBED_LIMITS.fields)
          problems.push(`${where}: fields ${fields.length} > ${EMBED_LIMITS.fields}`);
        fields.forEach((field: unknown, fieldIndex) => {
          const { title: name, value } = (field ?? {}) as { title?: unknown; value?: unknown };
          if (typeof name !== 'string' || name === '' || name.length > EMBED_LIMITS.name)
            problems.push(
              `${where}.fields[${fieldIndex}]: title must be 1 to ${EMBED_LIMITS.name} characters`,
            );
          if (typeof value !== 'string' || value === '' || value.length > EMBED_LIMITS.value)
            problems.push(
              `${where}.fields[${fieldIndex}]: value must be 1 to ${EMBED_LIMITS.value} characters`,
            );
          total +=
            (typeof name === 'string' ? name.length : 0) + (typeof value === 'string' ? value.length : 0);
        });
      }
    }
  });
  if (total > EMBED_LIMITS.total)
    problems.push(`attachments: ${total} > ${EMBED_LIMITS.total} characters in all`);
  return problems;
}

/** Everything that breaks Slack's limits in a webhook payload; empty when it would be accepted. */
export function validateSlackPayload(payload: unknown): string[] {
  const problems: string[] = [];
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return ['not a JSON object'];
  const { text, blocks } = payload as { text?: unknown; blocks?: unknown };
  if (text !== undefined && typeof text !== 'string') problems.push('text: not a string');
  if (typeof text === 'string' && text.length > LIMITS.text)
    problems.push(`text: ${text.length} > ${LIMITS.text}`);
  if (blocks !== undefined && !Array.isArray(blocks)) problems.push('blocks: not an array');
  const list = Array.isArray(blocks) ? (blocks as unknown[]) : [];
  if ((typeof text !== 'string' || text === '') && list.length === 0) problems.push('no_text');
  if (list.length > LIMITS.blocks) problems.push(`blocks: ${list.length} > ${LIMITS.blocks}`);
  list.forEach((block, index) => {
    for (const problem of validateBlock(block)) problems.push(`blocks[${index}]: ${problem}`);
  });
  return problems;
}

function validateBlock(block: unknown): string[] {
  if (block === null || typeof block !== 'object') return ['not an object'];
  const { type, block_id: blockId } = block as { type?: unknown; block_id?: unknown };
  const problems: string[] = [];
  if (typeof blockId === 'string' && blockId.length > LIMITS.blockId) problems.push('block_id too long');
  switch (type) {
    case 'header': {
      const text = (block as { text?: unknown }).text;
      problems.push(...textObject(text, LIMITS.header, 'text', ['plain_text']));
      break;
    }
    case 'section': {
      const { text, fields } = block as { text?: unknown; fields?: unknown };
      if (text === undefined && fields === undefined) problems.push('section without text or fields');
      if (text !== undefined) problems.push(...textObject(text, LIMITS.sectionText, 'text'));
      if (fields !== undefined) {
        if (!Array.isArray(fields) || fields.length === 0) problems.push('fields: not a non-empty array');
        else {
          if (fields.length > LIMITS.fields) problems.push(`fields: ${fields.length} > ${LIMITS.fields}`);
          fields.forEach((field, index) => {
            problems.push(...textObject(field, LIMITS.field, `fields[${index}]`));
          });
        }
      }
      break;
    }
    case 'context': {
      const elements = (block as { elements?: unknown }).elements;
      if (!Array.isArray(elements) || elements.length === 0) problems.push('elements: not a non-empty array');
      else {
        if (elements.length > LIMITS.contextElements) {
          problems.push(`elements: ${elements.length} > ${LIMITS.contextElements}`);
        }
        elements.forEach((element, index) => {
          problems.push(...textObject(element, LIMITS.contextText, `elements[${index}]`));
        });
      }
      break;
    }
    case 'divider':
      break;
    default:
      problems.push(`unsupported block type ${String(type)}`);
  }
  return problems;
}

function textObject(
  value: unknown,
  max: number,
  where: string,
  types: readonly string[] = ['plain_text', 'mrkdwn'],
): string[] {
  if (value === null || typeof value !== 'object') return [`${where}: not a text object`];
  const { type, text } = value as { type?: unknown; text?: unknown };
  if (typeof type !== 'string' || !types.includes(type))
    return [`${where}: type must be ${types.join(' or ')}`];
  if (typeof text !== 'string' || text.length === 0) return [`${where}: empty text`];
  if (text.length > max) return [`${where}: ${text.length} > ${max} characters`];
  return [];
}

export class SlackStandin {
  readonly received: ReceivedPost[] = [];
  readonly service: StandinService;
  readonly #script: StandinAnswer[] = [];
  readonly #events = new EventEmitter();
  readonly #hanging = new Set<ServerResponse>();
  readonly #server = createServer((request, response) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let payload: unknown;
      let problems: string[];
      try {
        payload = JSON.parse(raw);
        problems =
          this.service === 'slack' ? validateSlackPayload(payload) : validateAttachmentsPayload(payload);
      } catch {
        payload = undefined;
        problems = ['invalid_payload'];
      }
      const post: ReceivedPost = {
        at,
        path: request.url ?? '',
        headers: request.headers,
        raw,
        payload,
        problems,
      };
      const answer = this.#answerFor(post);
      this.received.push(post);
      this.#events.emit('received', this.received.length);
      if ('hang' in answer) {
        this.#hanging.add(response);
        response.on('close', () => this.#hanging.delete(response));
        return;
      }
      post.status = answer.status;
      response.writeHead(answer.status, { 'content-type': 'text/plain; charset=utf-8', ...answer.headers });
      response.end(answer.body);
    });
  });
  #path = '';
  #url = '';

  private constructor(service: StandinService) {
    this.service = service;
  }

  /**
   * Starts a stand-in on 127.0.0.1 with an ephemeral port and a webhook path of the service's shape
   * with a random token. Discord's `url` is the one Discord hands out; posts are taken below it, at
   * `/slack`, its Slack-compatible endpoint.
   */
  static async start(service: StandinService = 'slack'): Promise<SlackStandin> {
    const standin = new SlackStandin(service);
    await new Promise<void>((resolve, reject) => {
      standin.#server.once('error', reject);
      standin.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = standin.#server.address() as AddressInfo;
    const token = randomBytes(12).toString('hex');
    const path = {
      slack: `/services/T0STANDIN/B0STANDIN/${token}`,
      mattermost: `/hooks/${token}standin00`,
      discord: `/api/webhooks/123456789012345678/${token}`,
      rocketchat: `/hooks/STANDINintegration/${token}`,
    }[service];
    standin.#path = service === 'discord' ? `${path}/slack` : path;
    standin.#url = `http://127.0.0.1:${port}${path}`;
    return standin;
  }

  /** The webhook URL; its last segment is a secret, as in a real one. */
  get url(): string {
    return this.#url;
  }

  /** Answers for the next posts, in order; once used up, posts get the service's success. */
  enqueue(...answers: StandinAnswer[]): void {
    this.#script.push(...answers);
  }

  /** Resolves once `count` posts have arrived (immediately if they already have). */
  waitFor(count: number, timeoutMs = 5_000): Promise<ReceivedPost[]> {
    if (this.received.length >= count) return Promise.resolve(this.received.slice(0, count));
    return new Promise((resolve, reject) => {
      const onReceived = (total: number) => {
        if (total < count) return;
        clearTimeout(timer);
        this.#events.off('received', onReceived);
        resolve(this.received.slice(0, count));
      };
      const timer = setTimeout(() => {
        this.#events.off('received', onReceived);
        reject(new Error(`slack stand-in: ${this.received.length} of ${count} posts after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#events.on('received', onReceived);
    });
  }

  async close(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#hanging.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answerFor(post: ReceivedPost): StandinAnswer {
    switch (this.service) {
      case 'slack':
        if (post.path !== this.#path) return { status: 404, body: 'no_service' };
        if (post.problems.includes('invalid_payload')) return slackAnswers.invalidPayload();
        if (post.problems.length > 0) return { status: 400, body: 'invalid_blocks' };
        return this.#script.shift() ?? slackAnswers.ok();
      case 'mattermost':
        if (post.path !== this.#path) return mattermostAnswers.invalidWebhook();
        if (post.problems.includes('invalid_payload')) return mattermostAnswers.parseError();
        if (post.problems.includes('no_text')) return mattermostAnswers.noText();
        if (post.problems.length > 0) return mattermostAnswers.parseError();
        return this.#script.shift() ?? mattermostAnswers.ok();
      case 'discord':
        // The webhook's own path takes Discord's payload, in which a Slack one is empty.
        if (`${post.path}/slack` === this.#path) return discordAnswers.emptyMessage();
        if (post.path !== this.#path) return discordAnswers.unknownWebhook();
        if (post.problems.includes('no_text')) return discordAnswers.emptyMessage();
        if (post.problems.length > 0) return discordAnswers.invalidFormBody();
        return this.#script.shift() ?? discordAnswers.ok();
      case 'rocketchat':
        if (post.path !== this.#path) return rocketchatAnswers.unknownIntegration();
        if (post.problems.length > 0) return rocketchatError(400, post.problems.join('; '));
        return this.#script.shift() ?? rocketchatAnswers.ok();
    }
  }
}
