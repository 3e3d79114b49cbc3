import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventDraft } from '../../src/events/types.js';
import { HttpServer } from '../../src/http/server.js';
import type { SnapshotRef } from '../../src/store/snapshot-store.js';
import { createHarness, type Harness } from '../pollers/harness.js';
import { eventually } from '../support/redis.js';
import { serverOptions } from './helpers.js';

/**
 * The SSE stream over a real socket (port 0), read with fetch's streaming body: live events,
 * filters, resuming after Last-Event-ID, heartbeats, and the stream's Redis connection closing
 * when the client goes.
 */

let h: Harness;
let server: HttpServer;
let base: string;
const versions = new Map<string, number>();
let second = 0;

beforeAll(async () => {
  h = await createHarness({ empty: true });
  server = new HttpServer(serverOptions(h, { tuning: { heartbeatMs: 300 } }));
  base = await server.start();
});

afterAll(async () => {
  await server?.close();
  await h?.close();
});

/** Commits one event of `type` on `kind/id` (as the pollers would), returning its event id. */
async function emit(kind: 'vehicle' | 'robot', id: string, type: string): Promise<string> {
  const ref: SnapshotRef = { kind, id, facet: 'test' };
  const version = versions.get(`${kind}/${id}`) ?? 0;
  const drafts: EventDraft[] = [{ type, data: { severity: 'info' } }];
  second += 1;
  const observedAt = new Date(Date.UTC(2026, 2, 1, 10, 0, 0) + second * 1000).toISOString();
  const result = await h.store.commit(ref, version, { state: second, observedAt }, drafts);
  if (!result.committed) throw new Error('commit refused');
  versions.set(`${kind}/${id}`, result.version);
  return result.events[0]!.id;
}

interface Block {
  id?: string;
  event?: string;
  data?: string;
  comments: string[];
}

function parseBlock(text: string): Block {
  const block: Block = { comments: [] };
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) block.comments.push(line.slice(1).trim());
    else if (line.startsWith('id: ')) block.id = line.slice(4);
    else if (line.startsWith('event: ')) block.event = line.slice(7);
    else if (line.startsWith('data: '))
      block.data = (block.data === undefined ? '' : `${block.data}\n`) + line.slice(6);
  }
  return block;
}

/** An open SSE stream: blocks as they arrive. */
async function open(path: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(`${base}${path}`, { headers, signal: controller.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const blocks: Block[] = [];
  const waiters: Array<() => void> = [];
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          blocks.push(parseBlock(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
        for (const wake of waiters.splice(0)) wake();
      }
    } catch {
      // aborted
    }
  })();
  return {
    response,
    blocks,
    /** Resolves once `predicate` holds for the blocks received so far. */
    async until(predicate: (blocks: Block[]) => boolean, timeoutMs = 10_000): Promise<Block[]> {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(blocks)) {
        if (Date.now() > deadline)
          throw new Error(`stream: condition not met; got ${JSON.stringify(blocks)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return blocks;
    },
    events: () => blocks.filter((block) => block.data !== undefined && block.event === undefined),
    async close() {
      controller.abort();
      await pump;
    },
  };
}

const typesOf = (blocks: Block[]) =>
  blocks.map((block) => (JSON.parse(block.data!) as { type: string; subject: string }).type);

async function tailConnections(): Promise<Set<string>> {
  const list = (await h.admin.client('LIST')) as string;
  const ids = new Set<string>();
  for (const line of list.split('\n')) {
    if (line.includes(' name=fleetwatch:event-log-tail ')) {
      const id = /(?:^|\s)id=(\d+)/.exec(line)?.[1];
      if (id) ids.add(id);
    }
  }
  return ids;
}

describe('GET /api/events/stream', () => {
  it('delivers new events live, with the stream id as the SSE id, filtered by type', async () => {
    const all = await open('/api/events/stream');
    const vehiclesOnly = await open('/api/events/stream?type=vehicle.*');
    expect(all.response.status).toBe(200);
    expect(all.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    // The opening block (retry + comment) is sent once the stream follows the log.
    await all.until((blocks) => blocks.length >= 1);
    await vehiclesOnly.until((blocks) => blocks.length >= 1);
    expect(all.blocks[0]!.comments[0]).toMatch(/^fleetwatch event log, events after /);

    const first = await emit('vehicle', 'V-1', 'vehicle.vpn.disconnected');
    await emit('robot', 'R-1', 'robot.health.down');
    const third = await emit('vehicle', 'V-1', 'vehicle.vpn.connected');

    await all.until(() => all.events().length >= 3);
    expect(typesOf(all.events())).toEqual([
      'vehicle.vpn.disconnected',
      'robot.health.down',
      'vehicle.vpn.connected',
    ]);
    const logged = await h.store.keys.events;
    const entries = (await h.redis.xrange(logged, '-', '+')) as Array<[string, string[]]>;
    expect(all.events().map((block) => block.id)).toEqual(entries.map(([id]) => id));
    expect(JSON.parse(all.events()[0]!.data!)).toMatchObject({
      id: first,
      subject: 'vehicle/V-1',
      specversion: '1.0',
    });

    await vehiclesOnly.until(() => vehiclesOnly.events().length >= 2);
    expect(vehiclesOnly.events().map((block) => JSON.parse(block.data!).id)).toEqual([first, third]);
    await Promise.all([all.close(), vehiclesOnly.close()]);
  });

  it('with format=envelope, sends each event with the sentence fleetwatch says it in; refuses another format', async () => {
    const worded = await open('/api/events/stream?format=envelope&subject=vehicle/V-9');
    await worded.until((blocks) => blocks.length >= 1);
    const id = await emit('vehicle', 'V-9', 'vehicle.vpn.disconnected');
    await worded.until(() => worded.events().length >= 1);
    expect(JSON.parse(worded.events()[0]!.data!)).toEqual({
      event: expect.objectContaining({ id, type: 'vehicle.vpn.disconnected', specversion: '1.0' }),
      summary: 'V-9 is off the VPN',
    });
    await worded.close();
    const refused = await fetch(`${base}/api/events/stream?format=text`);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('query.format: must be cloudevent or envelope');
    // The log's items carry the same sentence.
    const page = (await (await fetch(`${base}/api/events?subject=vehicle/V-9`)).json()) as {
      items: Array<{ event: { id: string }; summary: string }>;
    };
    expect(page.items.map((item) => [item.event.id, item.summary])).toEqual([[id, 'V-9 is off the VPN']]);
  });

  it('resumes after Last-Event-ID: replays what was missed, then goes live, nothing doubled', async () => {
    const before = await tailConnections();
    const first = await open('/api/events/stream?subject=vehicle/V-2');
    await first.until((blocks) => blocks.length >= 1);
    await emit('vehicle', 'V-2', 'vehicle.ip.changed');
    await first.until(() => first.events().length >= 1);
    const lastSeen = first.events()[0]!.id!;
    const during = await tailConnections();
    const mine = [...during].filter((id) => !before.has(id));
    expect(mine.length).toBeGreaterThanOrEqual(1);

    // The client goes away; its stream's Redis connection is closed.
    await first.close();
    await eventually(
      async () => server.app?.eventStreams.open,
      (open) => open === 0,
    );
    await eventually(tailConnections, (now) => mine.every((id) => !now.has(id)));

    // Missed while away: two for V-2 (one other subject in between, filtered out).
    const missedA = await emit('vehicle', 'V-2', 'vehicle.power.changed');
    await emit('vehicle', 'V-3', 'vehicle.power.changed');
    const missedB = await emit('vehicle', 'V-2', 'vehicle.power.command.pending');

    const resumed = await open('/api/events/stream?subject=vehicle/V-2', { 'last-event-id': lastSeen });
    await resumed.until(() => resumed.events().length >= 2);
    const live = await emit('vehicle', 'V-2', 'vehicle.power.command.completed');
    await resumed.until(() => resumed.events().length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(resumed.events().map((block) => JSON.parse(block.data!).id)).toEqual([missedA, missedB, live]);
    await resumed.close();

    // The same with ?lastEventId= (for clients that cannot set headers).
    const viaQuery = await open(`/api/events/stream?subject=vehicle/V-2&lastEventId=${lastSeen}`);
    await viaQuery.until(() => viaQuery.events().length >= 3);
    expect(viaQuery.events().map((block) => JSON.parse(block.data!).id)).toEqual([missedA, missedB, live]);
    await viaQuery.close();
  });

  it('refuses a query parameter it does not take, naming the ones it does', async () => {
    const response = await fetch(`${base}/api/events/stream?since=0-0`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/unknown field "since".*type, subject, lastEventId/);
  });

  it('answers HEAD with the headers, without following the log', async () => {
    // The streams of the tests before have gone.
    await eventually(
      async () => server.app?.eventStreams.open,
      (open) => open === 0,
    );
    const response = await fetch(`${base}/api/events/stream`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(server.app?.eventStreams.open).toBe(0);
  });

  it('sends heartbeat comments while nothing happens', async () => {
    const quiet = await open('/api/events/stream?type=nothing.matches');
    await quiet.until((blocks) =>
      blocks.some((block) => block.comments.some((c) => c.startsWith('heartbeat'))),
    );
    await quiet.close();
  });

  it('ends open streams when the server closes', async () => {
    const extra = new HttpServer(serverOptions(h));
    const url = await extra.start();
    const response = await fetch(`${url}/api/events/stream`);
    const reader = response.body!.getReader();
    await reader.read();
    await extra.close();
    // The server ended the response: the body completes instead of hanging.
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
    expect(extra.address).toBeUndefined();
  });
});

describe('GET /api/events', () => {
  it('pages through the log with since=lastStreamId, filtered', async () => {
    const page1 = await fetch(`${base}/api/events?type=vehicle.power.*&limit=2&since=0-0`);
    expect(page1.status).toBe(200);
    const body1 = (await page1.json()) as {
      items: Array<{ streamId: string; event: { type: string } }>;
      lastStreamId: string;
    };
    expect(body1.items).toHaveLength(2);
    const page2 = await fetch(`${base}/api/events?type=vehicle.power.*&limit=10&since=${body1.lastStreamId}`);
    const body2 = (await page2.json()) as typeof body1;
    const types = [...body1.items, ...body2.items].map((item) => item.event.type);
    expect(types).toEqual([
      'vehicle.power.changed',
      'vehicle.power.changed',
      'vehicle.power.command.pending',
      'vehicle.power.command.completed',
    ]);
    const newest = (await (await fetch(`${base}/api/events?limit=1`)).json()) as typeof body1;
    expect(newest.items.map((item) => item.event.type)).toEqual(['vehicle.power.command.completed']);
  });
});
