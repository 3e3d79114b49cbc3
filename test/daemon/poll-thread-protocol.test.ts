import { describe, expect, it } from 'vitest';
import {
  type FromPollThread,
  type PollThreadHooks,
  recordingHooks,
  replayHooks,
} from '../../src/daemon/poll-thread-protocol.js';
import type { FleetEvent } from '../../src/events/types.js';
import { fleetEvent } from '../notifiers/routing/helpers.js';

describe('the poll thread protocol', () => {
  it("replays the thread's hook calls on the daemon's hooks, in order, the incidents' moves, the coalesced shards, the heap and its collections included", () => {
    const posted: FromPollThread[] = [];
    const recording = recordingHooks(
      (message) => posted.push(message),
      () => 1_000,
    );
    const down = fleetEvent('robot.health.down', 'robot/r-1');
    const count = fleetEvent('robot.state.changed', 'robot/r-2');
    recording.upstream.request({
      operation: 'robotHealth',
      target: 'robots',
      method: 'GET',
      status: 200,
      durationMs: 1.25,
    });
    recording.events([down, count]);
    recording.upstream.request({
      operation: 'powerOn',
      method: 'POST',
      status: 'timeout',
      durationMs: 30_000,
      auth: 'first',
    });
    recording.upstream.request({
      operation: 'powerOn',
      method: 'POST',
      status: 401,
      durationMs: 2,
      auth: 'renewed',
      retry: true,
    });
    recording.incidents?.([down], { shard: 2, revision: 41 });
    recording.incidents?.([down], undefined);
    recording.poll.shardsCoalesced?.('robot_health', 27);
    recording.heap?.(41_000_000, 64_000_000);
    recording.gc?.('major', 0.012);
    recording.flush();

    const seen: unknown[] = [];
    const hooks: PollThreadHooks = {
      poll: { shardsCoalesced: (poller, shards) => seen.push(['coalesced', poller, shards]) },
      upstream: { request: (info) => seen.push(['request', info]) },
      events: (events: readonly FleetEvent[]) => seen.push(['events', events.map((e) => e.type)]),
      incidents: (events, moved) => seen.push(['incidents', events.map((e) => e.type), moved]),
      heap: (used, total) => seen.push(['heap', used, total]),
      gc: (kind, seconds) => seen.push(['gc', kind, seconds]),
      jobFailed: () => {},
    };
    // Through a structured clone, as a message between threads is.
    for (const message of structuredClone(posted)) if (message.type === 'hooks') replayHooks(message, hooks);
    expect(seen).toEqual([
      [
        'request',
        { operation: 'robotHealth', target: 'robots', method: 'GET', status: 200, durationMs: 1.25 },
      ],
      ['events', ['robot.health.down', 'robot.state.changed']],
      [
        'request',
        { operation: 'powerOn', method: 'POST', status: 'timeout', durationMs: 30_000, auth: 'first' },
      ],
      [
        'request',
        { operation: 'powerOn', method: 'POST', status: 401, durationMs: 2, auth: 'renewed', retry: true },
      ],
      ['incidents', ['robot.health.down'], { shard: 2, revision: 41 }],
      ['incidents', ['robot.health.down'], undefined],
      ['coalesced', 'robot_health', 27],
      ['heap', 41_000_000, 64_000_000],
      ['gc', 'major', 0.012],
    ]);
  });

  it('packs a run of requests into one call, and sends a batch once it holds 1,024 requests', () => {
    const posted: FromPollThread[] = [];
    const recording = recordingHooks(
      (message) => posted.push(message),
      () => 1_000,
    );
    const operations = ['robotHealth', 'robotFeedback', 'powerStatus'];
    for (let i = 0; i < 1_030; i += 1) {
      recording.upstream.request({
        operation: operations[i % 3] as string,
        method: 'GET',
        status: i % 7 === 0 ? 503 : 200,
        durationMs: i / 4,
      });
    }
    // The 1,024th request sent its batch at once, without waiting for the timer.
    expect(posted).toHaveLength(1);
    recording.flush();
    expect(posted).toHaveLength(2);
    const [first, second] = structuredClone(posted);
    if (first?.type !== 'hooks' || second?.type !== 'hooks')
      throw new Error('expected two batches of hook calls');
    expect(first.calls).toEqual([['requests', 1_024]]);
    // Every string once per batch.
    expect(first.requests.strings).toEqual(['robotHealth', 'GET', 'robotFeedback', 'powerStatus']);
    const replayed: unknown[] = [];
    const hooks: PollThreadHooks = {
      poll: {},
      upstream: { request: (info) => replayed.push(info) },
      events: () => {},
      jobFailed: () => {},
    };
    replayHooks(first, hooks);
    replayHooks(second, hooks);
    expect(replayed).toHaveLength(1_030);
    expect(replayed[1_029]).toEqual({
      operation: 'robotHealth',
      method: 'GET',
      status: 503,
      durationMs: 1_029 / 4,
    });
    expect(replayed[7]).toEqual({
      operation: 'robotFeedback',
      method: 'GET',
      status: 503,
      durationMs: 7 / 4,
    });
  });
});
