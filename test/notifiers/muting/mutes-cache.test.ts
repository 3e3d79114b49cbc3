import { describe, expect, it } from 'vitest';
import { Mutes, type SilenceSource } from '../../../src/notifiers/muting/mutes.js';
import type { Silence } from '../../../src/notifiers/muting/silences.js';

/** A silence source whose reads are counted and answered when the test says. */
function heldSource(): SilenceSource & { reads: number; answer(): void } {
  const waiting: Array<() => void> = [];
  return {
    reads: 0,
    list() {
      this.reads += 1;
      return new Promise<Silence[]>((resolve) => waiting.push(() => resolve([])));
    },
    answer() {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

describe('Mutes reading silences and incidents', () => {
  it('reads again in the background past half the cache time, so a check does not wait for the read', async () => {
    const source = heldSource();
    const mutes = new Mutes({ silences: source, tagsFor: () => ({}), cacheMs: 1_000 });

    const first = mutes.at(0);
    expect(source.reads).toBe(1);
    source.answer();
    await first;

    await mutes.at(400); // fresh: no read
    expect(source.reads).toBe(1);

    // Past half its life: the next read starts, and the check is answered from the cache meanwhile.
    await mutes.at(600);
    expect(source.reads).toBe(2);
    await mutes.at(700); // the same read is still under way: no other
    expect(source.reads).toBe(2);
    source.answer();
    await new Promise((resolve) => setImmediate(resolve));

    await mutes.at(1_000); // the reading of 600 is 400 ms old
    expect(source.reads).toBe(2);
  });

  it('waits for a read once the cache time has passed with no check to renew it', async () => {
    const source = heldSource();
    const mutes = new Mutes({ silences: source, tagsFor: () => ({}), cacheMs: 1_000 });
    const first = mutes.at(0);
    source.answer();
    await first;

    let answered = false;
    const late = mutes.at(1_500).then(() => {
      answered = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(source.reads).toBe(2);
    expect(answered).toBe(false);
    source.answer();
    await late;
    expect(answered).toBe(true);
  });
});
