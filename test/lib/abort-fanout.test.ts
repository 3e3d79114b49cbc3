import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortFollowers, onAbort } from '../../src/lib/abort-fanout.js';
import { Semaphore } from '../../src/upstream/semaphore.js';

describe('onAbort', () => {
  it('calls every follower with the reason, through one listener on the signal', () => {
    const stop = new AbortController();
    const reasons: unknown[] = [];
    for (let i = 0; i < 50; i += 1) onAbort(stop.signal, (reason) => reasons.push(reason));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    expect(abortFollowers(stop.signal)).toBe(50);
    stop.abort('shutting down');
    expect(reasons).toHaveLength(50);
    expect(new Set(reasons)).toEqual(new Set(['shutting down']));
    expect(abortFollowers(stop.signal)).toBe(0);
  });

  it('does not call a follower once unlinked, and keeps the others', () => {
    const stop = new AbortController();
    let gone = 0;
    let kept = 0;
    const unlink = onAbort(stop.signal, () => {
      gone += 1;
    });
    onAbort(stop.signal, () => {
      kept += 1;
    });
    unlink();
    unlink();
    expect(abortFollowers(stop.signal)).toBe(1);
    stop.abort();
    expect([gone, kept]).toEqual([0, 1]);
  });

  it('calls at once for a signal already aborted, and holds nothing for it', () => {
    const stop = new AbortController();
    stop.abort('earlier');
    const reasons: unknown[] = [];
    onAbort(stop.signal, (reason) => reasons.push(reason))();
    expect(reasons).toEqual(['earlier']);
    expect(abortFollowers(stop.signal)).toBe(0);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('lets a follower unlink others while the signal aborts', () => {
    const stop = new AbortController();
    const called: string[] = [];
    let unlinkB = (): void => {};
    onAbort(stop.signal, () => {
      called.push('a');
      unlinkB();
    });
    unlinkB = onAbort(stop.signal, () => called.push('b'));
    stop.abort();
    // Every follower linked when the signal aborted is called: the abort is one moment for all.
    expect(called).toEqual(['a', 'b']);
  });
});

describe('Semaphore waits', () => {
  it('follow the signal through one listener, and a cancelled wait leaves the queue', async () => {
    const slots = new Semaphore(1);
    const stop = new AbortController();
    const release = await slots.acquire(stop.signal);
    const waits = Array.from({ length: 200 }, () => slots.acquire(stop.signal));
    expect(slots.waiting).toBe(200);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    expect(abortFollowers(stop.signal)).toBe(200);
    release();
    const next = await waits[0];
    expect(abortFollowers(stop.signal)).toBe(199);
    stop.abort(new Error('stopping'));
    const outcomes = await Promise.allSettled(waits.slice(1));
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    expect(slots.waiting).toBe(0);
    next?.();
    expect(slots.active).toBe(0);
  });
});
