import { describe, expect, it } from 'vitest';
import { CachedLoader, LateError } from '../../src/lib/cached-loader.js';

/** A load that settles only when the test says so. */
function gate<T>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('CachedLoader', () => {
  it('reuses a value for its ttl, shares a load under way, and does not cache failures', async () => {
    let clock = 0;
    let loads = 0;
    let fail = false;
    const loader = new CachedLoader(
      async () => {
        loads += 1;
        if (fail) throw new Error('down');
        return loads;
      },
      { ttlMs: 5_000, clock: () => clock },
    );
    expect(await Promise.all([loader.get(), loader.get(), loader.get()])).toEqual([1, 1, 1]);
    clock = 4_999;
    expect(await loader.get()).toBe(1);
    clock = 5_000;
    fail = true;
    await expect(loader.get()).rejects.toThrow('down');
    fail = false;
    expect(await loader.get()).toBe(3);
    expect(loads).toBe(3);
  });

  it('gives up on a load after the budget, keeps ONE load in flight, and serves its value once it settles', async () => {
    let clock = 0;
    let loads = 0;
    const pending = gate<string>();
    const loader = new CachedLoader(
      () => {
        loads += 1;
        return pending.promise;
      },
      { ttlMs: 1_000, budgetMs: 20, clock: () => clock },
    );
    // The load hangs: the caller hears LateError instead of waiting with it.
    const first = loader.get();
    await expect(first).rejects.toBeInstanceOf(LateError);
    // A load older than the budget answers at once, and no second load starts.
    clock = 60_000;
    const late = await loader.get().catch((error: unknown) => error);
    expect(late).toBeInstanceOf(LateError);
    expect((late as LateError).runningMs).toBe(60_000);
    expect((late as LateError).message).toBe('no answer within 20 ms (waiting for 60.0 s)');
    expect(await Promise.allSettled([loader.get(), loader.get(), loader.get()])).toHaveLength(3);
    expect(loads).toBe(1);
    expect(loader.runningMs).toBe(60_000);

    pending.open('answered');
    await expect(pending.promise).resolves.toBe('answered');
    // The late value is what the next callers get, from the cache.
    await expect(loader.get()).resolves.toBe('answered');
    expect(loads).toBe(1);
    expect(loader.runningMs).toBeUndefined();
  });
});
