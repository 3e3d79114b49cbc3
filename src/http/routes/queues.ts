import type { createBullBoard } from '@bull-board/api';
import { Queue } from 'bullmq';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HTTPMethods,
} from 'fastify';
import { throttledWarn } from '../../lib/redis-connection.js';
import { POLL_QUEUE_NAMES } from '../../pollers/poll-queue.js';
import { POLL_LANES } from '../../pollers/poller.js';
import { notifyQueueName, pollQueueName, QUEUE_NAMES } from '../../queues/names.js';
import { bullPrefix } from '../../store/keys.js';
import type { RouteContext } from '../context.js';
import type { RouteDoc } from '../route-doc.js';

/**
 * Bull Board at `/admin/queues` (token: `Authorization: Bearer <token>`, or in a browser HTTP Basic
 * with any user name and the token as the password): every fleetwatch queue — `poll-fleet`,
 * `poll-robots`, `events` and one `notify-<receiver>` per receiver in force (a reload's new receivers show at the next request).
 *
 * Read-only on purpose: the events queue's finished jobs are the relay's dedup record (cleaning
 * them could let an event be delivered twice), and a notification retried from the board would
 * skip the attempt reset a dead-letter replay does. Replay and purge go through
 * `/api/dead-letters` or `fleetwatch dlq`.
 *
 * Loaded on first use: Bull Board and what it brings (lodash, valibot, ejs, its fastify plugins)
 * take about 10 MB of a daemon that is otherwise 80–90 MB, and most replicas never show the UI.
 * The first request under `/admin/queues` (past the guard) imports it and builds the board in a
 * fastify instance of its own; this server forwards every request under the path to it
 * (`inject`), so the guard, the answer headers and the error shape stay this server's.
 */

type BoardOptions = Parameters<typeof createBullBoard>[0];

export const QUEUE_UI_PATH = '/admin/queues';

/** The queue UI's one entry in the OpenAPI document; its own pages, assets and JSON below it are its business. */
export const QUEUE_UI_DOC: RouteDoc = {
  summary: 'The queue UI (Bull Board), read-only',
  description:
    "Every fleetwatch queue: `poll-fleet`, `poll-robots`, `events` and one `notify-<receiver>` per receiver. In a browser, sign in with any user name and the API token as the password. The pages, assets and JSON below this path are the UI's own and are not listed.",
  tag: 'Queue UI',
  responses: { 200: { description: 'The UI', type: 'text/html' } },
};

const DESCRIPTIONS: Record<string, string> = {
  ...Object.fromEntries(
    POLL_LANES.map((lane) => [
      pollQueueName(lane),
      `poll shards of the pollers reading the ${lane === 'fleet' ? 'fleet API' : 'robot gateway'}: one job per poller, tick and shard`,
    ]),
  ),
  [QUEUE_NAMES.events]: 'CloudEvents relayed from the outbox, on their way to routing',
};

/** Builds the board in its own fastify instance (imports Bull Board on the way). */
async function buildBoardApp(context: RouteContext): Promise<FastifyInstance> {
  const [{ createBullBoard: create }, { BullMQAdapter }, { FastifyAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/fastify'),
  ]);
  const { redis, config } = context.options;
  const warn = throttledWarn(context.logger);
  // One Queue per name for as long as it is shown; a receiver a reload removes has its Queue closed.
  const open = new Map<string, Queue>();
  const queueOf = (name: string): Queue => {
    let queue = open.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: redis, prefix: bullPrefix(config.redis.prefix) });
      queue.on('error', (error: Error) => warn({ err: error.message, queue: name }, 'queue UI: queue error'));
      open.set(name, queue);
    }
    return queue;
  };
  const adapters = (receivers: readonly { name: string }[]) => {
    const names: string[] = [
      ...POLL_QUEUE_NAMES,
      QUEUE_NAMES.events,
      ...receivers.map((receiver) => notifyQueueName(receiver.name)),
    ];
    for (const [name, queue] of open) {
      if (!names.includes(name)) {
        open.delete(name);
        void queue.close().catch(() => {});
      }
    }
    return names.map(
      (name) =>
        new BullMQAdapter(queueOf(name), {
          readOnlyMode: true,
          description: DESCRIPTIONS[name] ?? `notifications for receiver ${name.slice('notify-'.length)}`,
        }),
    );
  };

  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_UI_PATH);
  // @bull-board/fastify carries its own copy of @bull-board/api's types (a patch version apart);
  // the adapter only stores what createBullBoard hands it.
  const boardAdapter = serverAdapter as unknown as BoardOptions['serverAdapter'];
  // The receivers in force when it is built: a reload replaces the section, and the board follows
  // at its next request.
  let listed = context.live().receivers;
  const board = create({
    queues: adapters(listed),
    serverAdapter: boardAdapter,
    options: { uiConfig: { boardTitle: `fleetwatch ${config.installation}` } },
  });
  const follow = () => {
    const receivers = context.live().receivers;
    if (receivers === listed) return;
    listed = receivers;
    board.replaceQueues(adapters(receivers));
  };

  const inner = Fastify({ logger: false });
  inner.addHook('onClose', async () => {
    await Promise.all([...open.values()].map((queue) => queue.close().catch(() => {})));
  });
  await inner.register(
    async (scope) => {
      scope.addHook('onRequest', async () => follow());
      await scope.register(serverAdapter.registerPlugin());
    },
    { prefix: QUEUE_UI_PATH },
  );
  await inner.ready();
  return inner;
}

/** Headers of the board's answer this server sets itself (or node does). */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

/** The methods Bull Board's routes take: its pages at the root are GET only. */
const BOARD_METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH'];

export async function registerQueueBoard(app: FastifyInstance, context: RouteContext): Promise<void> {
  let board: Promise<FastifyInstance> | undefined;
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    board ??= buildBoardApp(context);
    const inner = await board.catch((error: unknown) => {
      // Built again at the next request (a missing module stays missing, and says so each time).
      board = undefined;
      throw error;
    });
    const answer = await inner.inject({
      method: request.method as HTTPMethods,
      url: request.url,
      headers: request.headers,
      ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
    });
    reply.code(answer.statusCode);
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    }
    return reply.send(answer.rawPayload);
  };
  app.addHook('onClose', async () => {
    const inner = await board?.catch(() => undefined);
    await inner?.close();
  });
  // These routes declare no access, so the guard treats them as `admin`.
  app.route({ method: 'GET', url: QUEUE_UI_PATH, handler: forward });
  app.route({ method: BOARD_METHODS, url: `${QUEUE_UI_PATH}/*`, handler: forward });
}
