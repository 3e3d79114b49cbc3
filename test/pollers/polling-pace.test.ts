import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThresholdState } from '../../src/events/detectors/threshold.js';
import type { PollerName } from '../../src/pollers/config.js';
import { upstreamRef } from '../../src/pollers/upstream-windows.js';
import { createHarness, type Harness } from './harness.js';

/**
 * A poller's pace is judged only while the upstream it reads from (and the token issuer) is
 * settled and healthy: slow polls while it fails, or while it may be about to be judged degraded,
 * are that incident's. With `detectors.pace.failure_threshold: 1`, a tick with a shard left
 * waiting fires `monitor.polling.behind` at once when it is judged.
 */

let h: Harness;
const versions = new Map<string, number>();

beforeAll(async () => {
  h = await createHarness({
    empty: true,
    config: { detectors: { pace: { failure_threshold: 1, success_threshold: 1 } } },
  });
});

afterAll(async () => {
  await h?.close();
});

/** Stores the robot gateway's judged health as its `upstream` snapshot, as the upstream poller would. */
async function gateway(health: ThresholdState | null): Promise<void> {
  const ref = upstreamRef('robots');
  const version = versions.get('robots') ?? 0;
  h.advance(1_001); // the runner reads the upstreams' states at most once a second
  const result = await h.store.commit(
    ref,
    version,
    { state: { v: 1, health }, observedAt: new Date(h.now()).toISOString() },
    [],
  );
  expect(result.committed).toBe(true);
  versions.set('robots', version + 1);
}

const clear: ThresholdState = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
const pending: ThresholdState = { alerting: false, streak: 1, streakSince: Date.now(), incidentSince: null };
const firing: ThresholdState = { alerting: true, streak: 0, streakSince: null, incidentSince: Date.now() };
const resolving: ThresholdState = { ...firing, streak: 1, streakSince: Date.now() };

let tick = 0;
/** One tick of `poller` with a shard left waiting; the events it made. */
async function behindTick(poller: PollerName): Promise<string[]> {
  tick += 1;
  await h.runner.tickEnqueued(poller, h.runner.tickAt(poller) + tick, {
    shards: 3,
    coalesced: 1,
    waiting: 1,
  });
  return h.newEvents();
}

describe('the polling pace beside an upstream in trouble', () => {
  it('is not judged while the gateway has a bad streak under way, is degraded, or is on its way back', async () => {
    for (const health of [pending, firing, resolving]) {
      await gateway(health);
      expect(await behindTick('robot_health'), JSON.stringify(health)).toEqual([]);
    }
    // The fleet API is fine: the vehicles' pollers are judged all along.
    expect(await behindTick('power')).toEqual(['monitor.polling.behind poller/power']);
  });

  it('is judged again once the gateway is settled and healthy', async () => {
    await gateway(clear);
    expect(await behindTick('robot_health')).toEqual(['monitor.polling.behind poller/robot_health']);
  });
});
