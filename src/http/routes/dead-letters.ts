import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DeadLetters, receiversWithDeadLetters } from '../../notifiers/delivery/dead-letters.js';
import { DisabledReceivers } from '../../notifiers/delivery/disabled-receivers.js';
import { receiverNameField } from '../../queues/names.js';
import { audit } from '../audit.js';
import type { RouteContext } from '../context.js';
import { parse } from '../validate.js';

/**
 * Dead letters, the same ones `fleetwatch dlq` manages (failed jobs of the `notify-<receiver>`
 * queues, of configured receivers and of removed ones that left letters behind):
 * - `GET /api/dead-letters?receiver=`: oldest failure first.
 * - `POST /api/dead-letters/{id}/replay?receiver=` (token): back to the end of its receiver's
 *   queue, attempts reset; exactly once — a second replay answers 409 (`not_dead`). 409 also when
 *   the id is dead in several receivers (`ambiguous`: add `?receiver=`) or the receiver is disabled.
 * - `DELETE /api/dead-letters/{id}?receiver=` (token): deleted for good.
 * Unknown id or receiver: 404.
 */

const receiverQuery = z.strictObject({ receiver: receiverNameField.optional() });
// Dead-letter ids run past 100 characters (receiver, route, group labels, hash, time, sequence);
// the router bounds a path segment to MAX_PATH_SEGMENT.
const idParams = z.object({ id: z.string().min(1, { error: 'must not be empty' }) });

/** Receivers looked at: the configured ones plus those with letters left in Redis (rescanned every 30 s). */
class DeadLetterDirectory {
  readonly #context: RouteContext;
  readonly #disabledReceivers: DisabledReceivers;
  #current: { letters: DeadLetters; receivers: string; at: number } | undefined;
  readonly #retired: DeadLetters[] = [];

  constructor(context: RouteContext) {
    this.#context = context;
    this.#disabledReceivers = new DisabledReceivers({
      redis: context.options.redis,
      prefix: context.options.config.redis.prefix,
    });
  }

  async get(): Promise<DeadLetters> {
    const current = this.#current;
    // The configured receivers are those in force (a reload changes them).
    const configured = this.#context.live().receivers.map((receiver) => receiver.name);
    const fresh = current && Date.now() - current.at < 30_000;
    if (fresh && configured.every((name) => current.letters.receivers.includes(name))) return current.letters;
    const { redis, config } = this.#context.options;
    const leftOver = await receiversWithDeadLetters(redis, config.redis.prefix);
    const receivers = [...new Set([...configured, ...leftOver])].sort();
    const key = receivers.join(',');
    if (current && current.receivers === key) {
      current.at = Date.now();
      return current.letters;
    }
    if (current) this.#retired.push(current.letters);
    const letters = new DeadLetters({
      connection: redis,
      prefix: config.redis.prefix,
      receivers,
      disabledReceivers: this.#disabledReceivers,
      logger: this.#context.logger,
    });
    this.#current = { letters, receivers: key, at: Date.now() };
    return letters;
  }

  async close(): Promise<void> {
    const all = [...this.#retired.splice(0), ...(this.#current ? [this.#current.letters] : [])];
    this.#current = undefined;
    await Promise.all(all.map((letters) => letters.close()));
  }
}

export function registerDeadLetterRoutes(app: FastifyInstance, context: RouteContext): void {
  const directory = new DeadLetterDirectory(context);
  app.addHook('onClose', async () => {
    await directory.close();
  });

  app.get(
    '/api/dead-letters',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'Dead letters, oldest failure first',
          tag: 'Dead letters',
          query: receiverQuery,
          responses: { 200: '`{items}`', 404: 'No such receiver' },
        },
      },
    },
    async (request) => {
      const { receiver } = parse(receiverQuery, request.query, 'query');
      const letters = await directory.get();
      return { items: await letters.list({ receiver }) };
    },
  );

  app.post(
    '/api/dead-letters/:id/replay',
    {
      config: {
        access: 'write',
        doc: {
          summary: "Replay a dead letter: back to the end of its receiver's queue, attempts reset",
          tag: 'Dead letters',
          params: idParams,
          query: receiverQuery,
          responses: {
            200: '`{replayed}`',
            404: 'No such dead letter or receiver',
            409: 'Not dead any more (`not_dead`), dead in several receivers (`ambiguous`: add `receiver`), or the receiver is disabled',
          },
        },
      },
    },
    async (request) => {
      const { id } = parse(idParams, request.params, 'params');
      const { receiver } = parse(receiverQuery, request.query, 'query');
      const letters = await directory.get();
      const replayed = await letters.replay(id, { receiver });
      audit(
        context.logger,
        request,
        { id, receiver: replayed.receiver },
        'dead letter replayed through the API',
      );
      return { replayed };
    },
  );

  app.delete(
    '/api/dead-letters/:id',
    {
      config: {
        access: 'write',
        doc: {
          summary: 'Delete a dead letter for good',
          tag: 'Dead letters',
          params: idParams,
          query: receiverQuery,
          responses: {
            200: '`{purged}`',
            404: 'No such dead letter or receiver',
            409: 'Dead in several receivers (`ambiguous`)',
          },
        },
      },
    },
    async (request) => {
      const { id } = parse(idParams, request.params, 'params');
      const { receiver } = parse(receiverQuery, request.query, 'query');
      const letters = await directory.get();
      const purged = await letters.purge(id, { receiver });
      audit(
        context.logger,
        request,
        { id: purged.id, receiver: purged.receiver },
        'dead letter purged through the API',
      );
      return { purged };
    },
  );
}
