import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortFollowers } from '../../src/lib/abort-fanout.js';
import { linkedSignal } from '../../src/lib/linked-signal.js';

describe('linkedSignal', () => {
  it('aborts when any source does, with its reason, and stops following the others', () => {
    const stop = new AbortController();
    const job = new AbortController();
    const linked = linkedSignal([stop.signal, undefined, job.signal]);
    expect(linked.signal.aborted).toBe(false);
    job.abort('job gone');
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('job gone');
    expect(abortFollowers(stop.signal)).toBe(0);
  });

  it('is aborted at once by a source aborted before, and follows nothing', () => {
    const stop = new AbortController();
    stop.abort('shutting down');
    const other = new AbortController();
    const linked = linkedSignal([other.signal, stop.signal]);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('shutting down');
    expect(abortFollowers(other.signal)).toBe(0);
  });

  it('aborts alone by its own abort (a deadline), leaving the sources as they are', () => {
    const stop = new AbortController();
    const linked = linkedSignal([stop.signal]);
    linked.abort('deadline');
    expect(linked.signal.reason).toBe('deadline');
    expect(stop.signal.aborted).toBe(false);
    linked.release();
    expect(abortFollowers(stop.signal)).toBe(0);
  });

  it('leaves nothing behind in a long-lived source once released (AbortSignal.any does)', () => {
    const stop = new AbortController();
    for (let i = 0; i < 1_000; i += 1) linkedSignal([stop.signal, new AbortController().signal]).release();
    // One listener on the source however many followed it (abort-fanout.ts), and no follower left.
    expect(getEventListeners(stop.signal, 'abort').length).toBeLessThanOrEqual(1);
    expect(abortFollowers(stop.signal)).toBe(0);
    const kept = (signal: AbortSignal): number => {
      const key = Object.getOwnPropertySymbols(signal).find((s) => String(s).includes('Dependant'));
      return key === undefined ? 0 : ((signal as unknown as Record<symbol, Set<unknown>>)[key]?.size ?? 0);
    };
    // Node 20's AbortSignal.any would have left 1,000 entries here.
    expect(kept(stop.signal)).toBe(0);
  });
});
