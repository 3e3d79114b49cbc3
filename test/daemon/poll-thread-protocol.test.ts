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
  it("replays the thread's hook calls on the daemon's hooks, in order, the incidents' moves, the coalesced shards and the heap included", () => {
    const posted: FromPollThread[] = [];
    const recording = recordingHooks(
      (message) => posted.push(message),
      () => 1_000,
    );
    const down = fleetEvent('robot.health.down', 'robot/r-1');
    const count = fleetEvent('robot.state.changed', 'robot/r-2');
    recording.events([down, count]);
    recording.incidents?.([down], { shard: 2, revision: 41 });
    recording.incidents?.([down], undefined);
    recording.poll.shardsCoalesced?.('robot_health', 27);
    recording.heap?.(41_000_000, 64_000_000);
    recording.flush();

    const seen: unknown[] = [];
    const hooks: PollThreadHooks = {
      poll: { shardsCoalesced: (poller, shards) => seen.push(['coalesced', poller, shards]) },
      upstream: { request: () => {} },
      events: (events: readonly FleetEvent[]) => seen.push(['events', events.map((e) => e.type)]),
      incidents: (events, moved) => seen.push(['incidents', events.map((e) => e.type), moved]),
      heap: (used, total) => seen.push(['heap', used, total]),
      jobFailed: () => {},
    };
    // Through a structured clone, as a message between threads is.
    for (const message of structuredClone(posted))
      if (message.type === 'hooks') replayHooks(message.calls, hooks);
    expect(seen).toEqual([
      ['events', ['robot.health.down', 'robot.state.changed']],
      ['incidents', ['robot.health.down'], { shard: 2, revision: 41 }],
      ['incidents', ['robot.health.down'], undefined],
      ['coalesced', 'robot_health', 27],
      ['heap', 41_000_000, 64_000_000],
    ]);
  });
});
