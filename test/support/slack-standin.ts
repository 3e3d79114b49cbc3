import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for a Slack incoming webhook. It records every payload with its arrival
 * time, checks it against Slack's message limits (answering 400 `invalid_blocks` when one is
 * broken, `invalid_payload` when it is not JSON), and otherwise answers from a script of
 * responses, `200 ok` once the script is used up. Posts to any other path get 404 `no_service`,
 * as an unknown webhook does. The limits below are written out again on purpose rather than
 * imported from the notifier, so the notifier is checked against an independent reading.
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
        problems = validateSlackPayload(payload);
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

  /** Starts a stand-in on 127.0.0.1 with an ephemeral port and a webhook path with a random token. */
  static async start(): Promise<SlackStandin> {
    const standin = new SlackStandin();
    await new Promise<void>((resolve, reject) => {
      standin.#server.once('error', reject);
      standin.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = standin.#server.address() as AddressInfo;
    standin.#path = `/services/T0STANDIN/B0STANDIN/${randomBytes(12).toString('hex')}`;
    standin.#url = `http://127.0.0.1:${port}${standin.#path}`;
    return standin;
  }

  /** The webhook URL; its last segment is a secret, as in a real one. */
  get url(): string {
    return this.#url;
  }

  /** Answers for the next posts, in order; once used up, posts get `200 ok`. */
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
    if (post.path !== this.#path) return { status: 404, body: 'no_service' };
    if (post.problems.includes('invalid_payload')) return slackAnswers.invalidPayload();
    if (post.problems.length > 0) return { status: 400, body: 'invalid_blocks' };
    return this.#script.shift() ?? slackAnswers.ok();
  }
}
