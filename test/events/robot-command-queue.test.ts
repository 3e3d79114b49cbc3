import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { robotCommandQueueDetector } from '../../src/events/detectors/robot-command-queue.js';
import { at, Script } from './helpers.js';

const queue = (backlogThreshold = 5) => new Script(robotCommandQueueDetector, { backlogThreshold });

describe('robot command queue', () => {
  it('takes the first reading as a silent baseline, even a long queue', () => {
    const script = queue();
    script.ok(0, { length: 12 });
    script.ok(10, { length: 20 });
    expect(script.all).toEqual([]);
  });

  it('reports a backlog when the queue crosses the threshold upward, once', () => {
    const script = queue();
    script.ok(0, { length: 0 });
    expect(script.ok(10, { length: 4 })).toEqual([]);
    expect(script.ok(20, { length: 5 })).toEqual([
      {
        type: EVENT.robotCommandQueueBacklog,
        data: { severity: 'warning', previous: 4, current: 5, threshold: 5 },
      },
    ]);
    // Growing further, shrinking below the threshold and growing again: the same backlog.
    script.ok(30, { length: 9 });
    script.ok(40, { length: 2 });
    script.ok(50, { length: 7 });
    expect(script.count(EVENT.robotCommandQueueBacklog)).toBe(1);
  });

  it('reports the queue drained when it empties, with the backlog duration', () => {
    const script = queue();
    script.ok(0, { length: 1 });
    script.ok(10, { length: 6 });
    script.ok(20, { length: 3 });
    expect(script.ok(70, { length: 0 })).toEqual([
      {
        type: EVENT.robotCommandQueueDrained,
        data: { severity: 'info', previous: 3, current: 0, since: at(10), durationMs: 60_000 },
      },
    ]);
    // Empty again, then a new backlog: a new incident.
    expect(script.ok(80, { length: 0 })).toEqual([]);
    expect(script.ok(90, { length: 5 }).map((event) => event.type)).toEqual([EVENT.robotCommandQueueBacklog]);
  });

  it('says nothing about a queue that empties without a backlog', () => {
    const script = queue();
    script.ok(0, { length: 4 });
    script.ok(10, { length: 0 });
    expect(script.all).toEqual([]);
  });

  it('changes nothing on failures and unusable values', () => {
    const script = queue();
    script.ok(0, { length: 0 });
    script.ok(10, { length: 6 });
    const open = script.state;
    script.fail(20, 'invalid_payload');
    script.fail(30, 'timeout');
    script.ok(40, null as never);
    script.ok(50, { length: -1 });
    script.ok(60, { length: 2.5 });
    script.ok(70, { length: '0' } as never);
    expect(script.state).toEqual(open);
    expect(script.all.map((event) => event.type)).toEqual([EVENT.robotCommandQueueBacklog]);
  });

  it('follows detectors.command_queue.backlog_threshold', () => {
    const script = queue(1);
    script.ok(0, { length: 0 });
    expect(script.ok(10, { length: 1 }).map((event) => event.data.threshold)).toEqual([1]);
  });
});
