import { describe, expect, it } from 'vitest';
import { HOPS, type HopTimes, summariseHops, traceArrivals } from '../../bench/hops.js';
import type { Arrival } from '../../bench/sink.js';
import { redisUrl, suiteConnection, uniquePrefix } from '../support/redis.js';

const trace = (start: number, spans: readonly number[]): HopTimes => {
  const keys: Array<keyof HopTimes> = [
    'observed',
    'committed',
    'relayed',
    'dispatching',
    'dispatched',
    'queued',
    'sending',
    'arrived',
  ];
  const times = {} as HopTimes;
  let at = start;
  keys.forEach((key, index) => {
    at += index === 0 ? 0 : spans[index - 1]!;
    times[key] = at;
  });
  return times;
};

describe('where the time beyond the poll goes', () => {
  it('gives p50, p99 and max per stage, and the slowest changes stage by stage', () => {
    const traces = [
      trace(1_000, [1, 2, 3, 4, 5, 6, 7]),
      trace(2_000, [1, 2, 3, 40, 5, 6, 7]),
      trace(3_000, [1, 2, 3, 5, 5, 6, 7]),
      { ...trace(4_000, [1, 2, 3, 4, 5, 6, 7]), queued: Number.NaN },
    ];
    const result = summariseHops(traces, 5, 2);
    expect(result.of).toBe(5);
    // The one without its delivery job's time is left out of the whole traces only.
    expect(result.traced).toBe(3);
    const dispatch = result.hops.find((hop) => hop.name === 'dispatch')!;
    expect(dispatch).toMatchObject({ count: 4, p50Ms: 5, maxMs: 40 });
    expect(result.hops.find((hop) => hop.name === 'dispatched → delivery queued')!.count).toBe(3);
    expect(result.slowest.map((slow) => slow.totalMs)).toEqual([64, 29]);
    expect(result.slowest[0]!.hopsMs).toEqual([1, 2, 3, 40, 5, 6, 7]);
    expect(result.slowest[0]!.hopsMs).toHaveLength(HOPS.length);
  });
});

describe('tracing arrivals through Redis', () => {
  const prefix = uniquePrefix('hops');
  const redis = suiteConnection(prefix);

  it('reads each stage back from the event logs and the jobs BullMQ keeps', async () => {
    const t = Date.now() - 60_000;
    // Two shards' event logs: the commit is the entry id's time.
    await redis.xadd(`{${prefix}}:events`, `${t + 5}-0`, 'id', 'evt_a', 'type', 'x');
    await redis.xadd(`{${prefix}.1-ab}:events`, `${t + 1_005}-0`, 'data', '{}', 'id', 'evt_b');
    await redis.hset(`{${prefix}}:events:evt_a`, {
      timestamp: t + 7,
      processedOn: t + 9,
      finishedOn: t + 20,
    });
    await redis.hset(`{${prefix}}:events:evt_b`, {
      timestamp: t + 1_010,
      processedOn: t + 1_011,
      finishedOn: t + 1_012,
    });
    await redis.hset(`{${prefix}}:notify-sink:n_1_a`, {
      timestamp: t + 25,
      processedOn: t + 26,
      finishedOn: t + 30,
    });
    const arrivals: Arrival[] = [
      { id: 'evt_a', type: 'x', subject: 's/1', observedAt: t, arrivedAt: t + 28, notification: 'n:1:a' },
      // No delivery job found for this one: its last stages stay unknown.
      {
        id: 'evt_b',
        type: 'x',
        subject: 's/2',
        observedAt: t + 1_000,
        arrivedAt: t + 1_050,
        notification: 'n:2',
      },
    ];
    const traces = await traceArrivals([redisUrl()], prefix, 'sink', arrivals);
    expect(traces[0]).toEqual({
      observed: t,
      committed: t + 5,
      relayed: t + 7,
      dispatching: t + 9,
      dispatched: t + 20,
      queued: t + 25,
      sending: t + 26,
      arrived: t + 28,
    });
    expect(traces[1]).toMatchObject({ committed: t + 1_005, relayed: t + 1_010, dispatched: t + 1_012 });
    expect(traces[1]!.queued).toBeNaN();
    expect(summariseHops(traces, 2).traced).toBe(1);
  });
});
