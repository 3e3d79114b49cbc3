import { describe, expect, it } from 'vitest';
import type { IncidentRecord } from '../../../src/notifiers/muting/firing-incidents.js';
import { compileInhibitRules } from '../../../src/notifiers/muting/inhibition.js';
import { Mutes, type SilenceSource } from '../../../src/notifiers/muting/mutes.js';
import type { Silence } from '../../../src/notifiers/muting/silences.js';
import { fleetEvent, T0 } from '../routing/helpers.js';

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

  it('keeps the inhibition it built while the incidents read are the same array', async () => {
    const rules = compileInhibitRules([
      {
        name: 'gw',
        source_matchers: { type: 'vehicle.vpn.disconnected' },
        target_matchers: { type: 'vehicle.unreachable' },
        equal: [],
      },
    ]);
    const gateway: IncidentRecord = {
      subject: 'vehicle/gw',
      key: 'vpn',
      type: 'vehicle.vpn.disconnected',
      severity: 'critical',
      firing: true,
      since: T0,
      at: T0,
    };
    // Counts the walks over the incidents read: building a reading walks them once.
    let walks = 0;
    const counted = (records: IncidentRecord[]): readonly IncidentRecord[] => {
      const walk = records[Symbol.iterator].bind(records);
      Object.defineProperty(records, Symbol.iterator, {
        value: () => {
          walks += 1;
          return walk();
        },
      });
      return records;
    };
    let incidents = counted([gateway]);
    const mutes = new Mutes({
      tagsFor: () => ({}),
      inhibition: { rules, incidents: { list: async () => incidents }, maxWaitMs: 0 },
      cacheMs: 1_000,
    });
    const unreachable = fleetEvent('vehicle.unreachable', 'vehicle/v-1', { time: T0 });
    expect((await mutes.at(T0))(unreachable)?.by).toBe('gw');
    expect(walks).toBe(1);
    // Read again (the cache ran out) and the same array: the reading is kept, not built again.
    expect((await mutes.at(T0 + 5_000))(unreachable)?.by).toBe('gw');
    expect(walks).toBe(1);
    // A new array (something changed): a new reading.
    incidents = counted([{ ...gateway, firing: false, at: T0 + 6_000 }]);
    expect((await mutes.at(T0 + 10_000))(unreachable)).toBeUndefined();
    expect(walks).toBe(2);
  });
});
