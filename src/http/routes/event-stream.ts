import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { describeEvent } from '../../events/describe.js';
import { linkedSignal } from '../../lib/linked-signal.js';
import type { EventLogEntry, EventTail } from '../../store/event-log.js';
import type { RouteContext } from '../context.js';
import { unavailable } from '../errors.js';
import { parse, rejectRequest, streamId } from '../validate.js';
import { eventFilterFields } from './events.js';

/**
 * `GET /api/events/stream`: server-sent events, live from the event log.
 *
 * - Each event is `id: <stream id>` + `data: <CloudEvent JSON>` (default `message` type; the
 *   CloudEvent's own `type` is in the data). Filters: `?type=` (glob) and `?subject=` (exact).
 *   With `?format=envelope` the data is `{event, summary}` instead, the event with the sentence
 *   fleetwatch says it in (as `/api/events` items carry it): for a page that shows events to
 *   people, which cannot word them itself. The CloudEvent is the same either way.
 * - Resumable: a reconnecting EventSource sends `Last-Event-ID` (or pass `?lastEventId=`); the
 *   stream first replays every matching event logged after that id, then goes live, with nothing
 *   missed or doubled in between (one XREAD cursor from that id on). When the log may have been
 *   trimmed past that id (it is capped at `events.log_max_length`), an `event: gap` says so first.
 * - Without an id it starts with the next event logged. A `: heartbeat` comment every ~15 s keeps
 *   proxies from closing an idle stream; `retry: 3000` tells EventSource how soon to reconnect.
 * - Each stream has its own Redis connection (a blocking XREAD), closed when the client goes or
 *   the server closes. A slow client is not buffered without bound: the stream waits for the
 *   socket to drain before reading on.
 */

// Strict, as every other query: `?since=` (a parameter of /api/events) is refused by name rather
// than ignored, which left the caller on the live tail without the replay it asked for.
const streamQuery = z.strictObject({
  ...eventFilterFields,
  lastEventId: streamId.optional(),
  format: z
    .enum(['cloudevent', 'envelope'], { error: 'must be cloudevent or envelope' })
    .optional()
    .describe('`cloudevent` (the default): each data is the CloudEvent; `envelope`: `{event, summary}`'),
});

declare module 'fastify' {
  interface FastifyInstance {
    /** SSE streams currently open (their Redis connections are open too). */
    readonly eventStreams: { open: number };
  }
}

function frame(entry: EventLogEntry, envelope: boolean): string {
  const data = envelope ? { event: entry.event, summary: describeEvent(entry.event) } : entry.event;
  return `id: ${entry.streamId}\ndata: ${JSON.stringify(data)}\n\n`;
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not ready within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Writes, and waits for the socket to drain when its buffer is full; false when the client is gone. */
async function send(res: ServerResponse, text: string, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted || res.destroyed) return false;
  if (res.write(text)) return true;
  try {
    await once(res, 'drain', { signal });
    return true;
  } catch {
    return false;
  }
}

export function registerEventStreamRoute(app: FastifyInstance, context: RouteContext): void {
  const streams = { open: 0 };
  app.decorate('eventStreams', { getter: () => streams });

  app.get(
    '/api/events/stream',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'The event log, live, as server-sent events',
          description:
            'Each event is `id: <stream id>` and `data: <CloudEvent>` (with `format=envelope`, `data: {event, summary}`: the CloudEvent and the sentence fleetwatch says it in). Resumable with `Last-Event-ID` (or `lastEventId`): the matching events after it are replayed first; `event: gap` says when the capped log may have lost some.',
          tag: 'Events',
          query: streamQuery,
          responses: {
            200: { description: 'The stream', type: 'text/event-stream' },
            503: 'The stream could not get its Redis connection in time',
          },
        },
      },
    },
    async (request, reply) => {
      const query = parse(streamQuery, request.query, 'query');
      // HEAD (fastify adds it to every GET route): the headers, without following the log.
      if (request.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').send();
      let fromId = query.lastEventId;
      const header = request.headers['last-event-id'];
      if (typeof header === 'string' && header.trim() !== '') {
        const checked = streamId.safeParse(header.trim());
        if (!checked.success) {
          rejectRequest([
            `headers.last-event-id: ${checked.error.issues[0]?.message ?? 'is not a stream id'}`,
          ]);
        }
        fromId = header.trim();
      }

      // Ends with the client, or with the server.
      const stop = linkedSignal([context.closing]);
      const signal = stop.signal;
      const tail: EventTail = context.eventLog.tail({
        fromId: fromId ?? '$',
        ...(query.type === undefined ? {} : { type: query.type }),
        ...(query.subject === undefined ? {} : { subject: query.subject }),
        signal,
      });
      let after: string;
      let gap: Awaited<ReturnType<typeof context.eventLog.gapAfter>> | undefined;
      try {
        after = await within(tail.ready, context.tuning.streamConnectTimeoutMs).catch(() => {
          throw unavailable('cannot follow the event log right now: Redis does not answer');
        });
        gap = fromId === undefined ? undefined : await context.eventLog.gapAfter(fromId);
      } catch (error) {
        // Not streaming after all: let go of the tail and of the server's closing signal.
        stop.release();
        await tail.close();
        throw error;
      }

      reply.hijack();
      const res = reply.raw;
      streams.open += 1;
      const onClose = () => stop.abort();
      res.on('close', onClose);
      const heartbeat = setInterval(() => {
        if (!res.destroyed && res.writableLength === 0)
          res.write(`: heartbeat ${new Date().toISOString()}\n\n`);
      }, context.tuning.heartbeatMs);
      heartbeat.unref();
      try {
        // What the hooks set before the stream took the reply over (CORS for an allowed origin).
        for (const [name, value] of Object.entries(reply.getHeaders())) {
          if (value !== undefined) res.setHeader(name, value);
        }
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          // The connection is the stream's alone: closed with it, so a server that is stopping does
          // not wait for the client's keep-alive time-out.
          connection: 'close',
          'x-accel-buffering': 'no',
          'x-content-type-options': 'nosniff',
        });
        let opening = `retry: 3000\n: fleetwatch event log, events after ${after}\n\n`;
        if (gap) opening += `event: gap\ndata: ${JSON.stringify(gap)}\n\n`;
        if (await send(res, opening, signal)) {
          for await (const entry of tail) {
            if (!(await send(res, frame(entry, query.format === 'envelope'), signal))) break;
          }
        }
      } catch (error) {
        if (!signal.aborted) {
          context.logger.warn({ err: (error as Error).message }, 'event stream ended with an error');
        }
      } finally {
        clearInterval(heartbeat);
        res.off('close', onClose);
        stop.abort();
        stop.release();
        await tail.close();
        streams.open -= 1;
        if (!res.destroyed) res.end();
      }
    },
  );
}
