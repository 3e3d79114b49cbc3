import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.js';

/**
 * While the robot gateway is degraded (the `upstream` poller judged it so), a per-entity robot
 * poller polls only `pollers.upstream.degraded_sample` robots per tick, from its first shard; the
 * other shards are skipped and their robots keep their state. Once it recovers, every robot is
 * polled again. The vehicles' pollers read another upstream and go on as usual.
 */

let h: Harness;

beforeAll(async () => {
  h = await createHarness({
    empty: true,
    config: {
      pollers: { upstream: { interval: '1s', degraded_sample: 1 } },
      detectors: { upstream: { failure_threshold: 1, success_threshold: 1, min_requests: 5 } },
    },
  });
  for (let i = 1; i <= 6; i += 1) h.sim.control.addRobot({ deviceId: `DR-${i}` });
  h.sim.control.addVehicle({
    id: 'DV-1',
    vpnConnected: true,
    state: 'on',
    updatedAt: new Date().toISOString(),
  });
  await h.tick('vehicles', 'robots');
});

afterAll(async () => {
  await h?.close();
});

/** Runs the upstream poller on the window the previous ticks were counted in. */
async function judgeWindow(): Promise<string[]> {
  h.advance(1_100);
  await h.tick('upstream');
  return (await h.newEvents()).filter((line) => line.startsWith('monitor.upstream'));
}

describe('polling while an upstream is degraded', () => {
  it('polls a sample of the degraded upstream’s entities, then all of them once it recovers', async () => {
    const healthy = await h.tick('robot_health');
    expect(healthy.map((outcome) => [outcome.shard, outcome.observed, outcome.skipped])).toEqual([
      [0, 2, undefined],
      [1, 2, undefined],
      [2, 2, undefined],
    ]);
    await judgeWindow();

    h.sim.control.setFaults({ errorRates: { 503: 1 }, scope: 'robots' });
    const failing = await h.tick('robot_health');
    expect(failing.reduce((sum, outcome) => sum + outcome.failed, 0)).toBe(6);
    expect(await judgeWindow()).toEqual(['monitor.upstream.degraded upstream/robots']);

    const sampled = await h.tick('robot_health', 'robot_feedback', 'power');
    const byPoller = (poller: string) =>
      sampled
        .filter((outcome) => outcome.poller === poller)
        .map((outcome) => [outcome.shard, outcome.observed, outcome.skipped]);
    expect(byPoller('robot_health')).toEqual([
      [0, 1, undefined],
      [1, 0, 'upstream-degraded'],
      [2, 0, 'upstream-degraded'],
    ]);
    expect(byPoller('robot_feedback')).toEqual([
      [0, 1, undefined],
      [1, 0, 'upstream-degraded'],
      [2, 0, 'upstream-degraded'],
    ]);
    // The fleet API is fine: the vehicles are polled as usual.
    expect(byPoller('power')).toEqual([[0, 1, undefined]]);

    h.sim.control.clearFaults();
    // In a window of its own: the sample's answers alone judge the recovery.
    h.advance(1_100);
    await h.tick('robot_health');
    expect(await judgeWindow()).toEqual(['monitor.upstream.recovered upstream/robots']);
    const again = await h.tick('robot_health');
    expect(again.map((outcome) => [outcome.shard, outcome.observed, outcome.skipped])).toEqual([
      [0, 2, undefined],
      [1, 2, undefined],
      [2, 2, undefined],
    ]);
  });
});
