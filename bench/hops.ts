import { Redis } from 'ioredis';
import { bullPrefix } from '../src/store/keys.js';
import type { Arrival } from './sink.js';

/**
 * Where the time beyond the poll goes: for each measured change, the moments its event passed
 * each stage, read back from what Redis keeps after the run (the event log's entry id is the
 * commit's time; BullMQ keeps each job's added, started and finished times), and the moment its
 * webhook call arrived. Every process runs on this one machine, so the clocks are one.
 */

/** The stages an event passes, in order, and the moment it left each one (epoch ms). */
export interface HopTimes {
  /** The poll's answer arrived (the event's `time`). */
  observed: number;
  /** Committed: the event log entry's id. */
  committed: number;
  /** The relay added its `events` job. */
  relayed: number;
  /** The events worker took the job (dispatch: order, routing, the group). */
  dispatching: number;
  /** The dispatch was done. */
  dispatched: number;
  /** The flusher added the notification's delivery job. */
  queued: number;
  /** The delivery worker took it. */
  sending: number;
  /** The webhook call arrived at the receiver. */
  arrived: number;
}

export const HOPS: ReadonlyArray<{ name: string; from: keyof HopTimes; to: keyof HopTimes }> = [
  { name: 'answer → commit', from: 'observed', to: 'committed' },
  { name: 'commit → relayed', from: 'committed', to: 'relayed' },
  { name: 'relayed → dispatch starts', from: 'relayed', to: 'dispatching' },
  { name: 'dispatch', from: 'dispatching', to: 'dispatched' },
  { name: 'dispatched → delivery queued', from: 'dispatched', to: 'queued' },
  { name: 'queued → sending', from: 'queued', to: 'sending' },
  { name: 'sending → arrived', from: 'sending', to: 'arrived' },
];

export interface HopSummary {
  name: string;
  /** Changes whose both moments were found. */
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface HopsResult {
  /** Changes traced through every stage, of those measured. */
  traced: number;
  of: number;
  hops: HopSummary[];
  /** The slowest changes, stage by stage (ms spent in each of HOPS, then the total). */
  slowest: Array<{ totalMs: number; hopsMs: number[] }>;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Summarises traced changes: p50, p99 and max per hop, and the slowest changes hop by hop. */
export function summariseHops(traces: readonly HopTimes[], of: number, slowest = 5): HopsResult {
  const hops = HOPS.map(({ name, from, to }) => {
    const spans = traces
      .map((trace) => trace[to] - trace[from])
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    return {
      name,
      count: spans.length,
      p50Ms: quantile(spans, 0.5),
      p99Ms: quantile(spans, 0.99),
      maxMs: spans.at(-1) ?? Number.NaN,
    };
  });
  const whole = traces.filter((trace) =>
    HOPS.every(({ from, to }) => Number.isFinite(trace[to] - trace[from])),
  );
  const ranked = [...whole].sort((a, b) => b.arrived - b.observed - (a.arrived - a.observed));
  return {
    traced: whole.length,
    of,
    hops,
    slowest: ranked.slice(0, slowest).map((trace) => ({
      totalMs: trace.arrived - trace.observed,
      hopsMs: HOPS.map(({ from, to }) => trace[to] - trace[from]),
    })),
  };
}

/** A key's reply from whichever node of `clients` holds it (a cluster node answers MOVED otherwise). */
async function onAnyNode<T>(
  clients: readonly Redis[],
  run: (client: Redis) => Promise<T>,
): Promise<T | undefined> {
  for (const client of clients) {
    try {
      return await run(client);
    } catch (error) {
      if (!/^MOVED|^ASK/.test((error as Error).message)) throw error;
    }
  }
  return undefined;
}

function jobTimes(hash: Record<string, string> | undefined): {
  added: number;
  started: number;
  finished: number;
} {
  return {
    added: Number(hash?.timestamp ?? Number.NaN),
    started: Number(hash?.processedOn ?? Number.NaN),
    finished: Number(hash?.finishedOn ?? Number.NaN),
  };
}

/**
 * Reads each arrival's stages back from Redis (`urls`: the one server, or every cluster master).
 * `prefix` is fleetwatch's `redis.prefix`, `receiver` the receiver the arrivals came through.
 */
export async function traceArrivals(
  urls: readonly string[],
  prefix: string,
  receiver: string,
  arrivals: readonly Arrival[],
): Promise<HopTimes[]> {
  const clients = urls.map((url) => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 }));
  try {
    await Promise.all(clients.map((client) => client.connect()));
    const queues = bullPrefix(prefix);
    // The event logs (one per shard): their entries over the measured window, event id → commit.
    const committed = new Map<string, number>();
    const observed = arrivals.map((arrival) => arrival.observedAt).filter(Number.isFinite);
    const from = Math.min(...observed) - 1_000;
    const to = Math.max(...arrivals.map((arrival) => arrival.arrivedAt)) + 1_000;
    for (const client of clients) {
      // `{prefix}:events`, and with shards `{prefix.<n>-<salt>}:events` (store/keys.ts).
      for (const pattern of [`{${prefix}}:events`, `{${prefix}.*}:events`]) {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'TYPE', 'stream');
          cursor = next;
          for (const key of keys) {
            const entries = (await client.xrange(
              key,
              String(Math.floor(from)),
              String(Math.ceil(to)),
            )) as Array<[string, string[]]>;
            for (const [id, fields] of entries) {
              const at = fields.indexOf('id');
              if (at >= 0 && at % 2 === 0) committed.set(fields[at + 1]!, Number(id.split('-')[0]));
            }
          }
        } while (cursor !== '0');
      }
    }
    const traces: HopTimes[] = [];
    for (const arrival of arrivals) {
      const event = jobTimes(
        await onAnyNode(clients, (client) => client.hgetall(`${queues}:events:${arrival.id}`)),
      );
      const delivery = arrival.notification
        ? jobTimes(
            await onAnyNode(clients, (client) =>
              client.hgetall(`${queues}:notify-${receiver}:${arrival.notification!.replaceAll(':', '_')}`),
            ),
          )
        : jobTimes(undefined);
      traces.push({
        observed: arrival.observedAt,
        committed: committed.get(arrival.id) ?? Number.NaN,
        relayed: event.added,
        dispatching: event.started,
        dispatched: event.finished,
        queued: delivery.added,
        sending: delivery.started,
        arrived: arrival.arrivedAt,
      });
    }
    return traces;
  } finally {
    for (const client of clients) client.disconnect();
  }
}
