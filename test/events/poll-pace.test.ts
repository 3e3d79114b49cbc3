import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS } from '../../src/events/detector-options.js';
import { pollPaceDetector } from '../../src/events/detectors/poll-pace.js';
import { at, Script, typesOf } from './helpers.js';

const pace = (failureThreshold = 3, successThreshold = 3) =>
  new Script(pollPaceDetector, { ...DEFAULT_DETECTOR_OPTIONS.pollPace, failureThreshold, successThreshold });
const onPace = { shards: 40, coalesced: 0, waiting: 0, intervalMs: 30_000 };
/** `waiting` of the shards still held by an earlier job had not started; one more was running. */
const behind = (waiting: number) => ({ shards: 40, coalesced: waiting + 1, waiting, intervalMs: 30_000 });
/** Shards held only by jobs still running: a slow poll, not a lack of workers. */
const running = (coalesced: number) => ({ shards: 40, coalesced, waiting: 0, intervalMs: 30_000 });

describe('polling pace', () => {
  it('is silent on pace and on fewer behind ticks in a row than the threshold', () => {
    const script = pace();
    script.ok(0, onPace);
    script.ok(30, behind(3));
    script.ok(60, behind(1));
    script.ok(90, onPace);
    script.ok(120, behind(40));
    script.ok(150, onPace);
    expect(script.all).toEqual([]);
  });

  it('fires after the threshold of behind ticks with the tick that tipped it, and resolves with the duration', () => {
    const script = pace();
    script.ok(0, onPace);
    script.ok(30, behind(2));
    script.ok(60, behind(5));
    expect(script.ok(90, behind(12))).toEqual([
      {
        type: EVENT.pollingBehind,
        data: {
          severity: 'warning',
          previous: 'on_pace',
          current: 'behind',
          since: at(30),
          consecutiveTicks: 3,
          shards: 40,
          coalesced: 13,
          waiting: 12,
          intervalMs: 30_000,
        },
      },
    ]);
    script.ok(120, behind(1));
    script.ok(150, running(2));
    script.ok(180, onPace);
    // A behind tick in a good streak starts it again.
    script.ok(210, behind(1));
    script.ok(240, onPace);
    script.ok(270, onPace);
    expect(script.ok(300, onPace)).toEqual([
      {
        type: EVENT.pollingCaughtUp,
        data: {
          severity: 'info',
          previous: 'behind',
          current: 'on_pace',
          since: at(30),
          durationMs: 210_000,
        },
      },
    ]);
  });

  it('takes shards whose earlier job is still running for a slow poll, not for falling behind', () => {
    const script = pace(1, 1);
    script.ok(0, onPace);
    for (let tick = 1; tick <= 5; tick += 1) script.ok(30 * tick, running(40));
    expect(script.all).toEqual([]);
  });

  it('reports a poller behind from its first ticks, as never seen on pace', () => {
    const script = pace(2, 1);
    script.ok(0, behind(1));
    const [event] = script.ok(30, behind(1));
    expect(event?.data.previous).toBeNull();
    expect(typesOf(script.ok(60, onPace))).toEqual([EVENT.pollingCaughtUp]);
  });

  it('ignores failed observations and unusable ticks', () => {
    const script = pace(1, 1);
    script.ok(0, onPace);
    script.fail(30, 'timeout');
    script.ok(60, { shards: 0, coalesced: 0, waiting: 0, intervalMs: 30_000 });
    script.ok(90, { shards: 4, coalesced: 5, waiting: 5, intervalMs: 30_000 });
    script.ok(100, { shards: 4, coalesced: 1, waiting: 2, intervalMs: 30_000 });
    script.ok(120, { shards: 4, coalesced: 2, waiting: -1, intervalMs: 30_000 });
    script.ok(150, { shards: 4, coalesced: 2, waiting: 1.5, intervalMs: 30_000 });
    script.ok(180, { shards: 4, coalesced: 1, waiting: 1 } as never);
    script.ok(210, null as never);
    expect(script.all).toEqual([]);
  });
});
