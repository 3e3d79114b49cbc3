import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamRef } from '../../src/pollers/upstream-windows.js';
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
      // One read at a time per job, so a job's reads come in order.
      upstream: { http: { max_in_flight: 4 } },
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

/** Moves the clock to the start of the next 1 s counting window: a tick's calls then share one. */
function startOfWindow(): void {
  h.advance(1_000 - (h.now() % 1_000) + 5);
}

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
    startOfWindow();
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
    startOfWindow();
    await h.tick('robot_health');
    expect(await judgeWindow()).toEqual(['monitor.upstream.recovered upstream/robots']);
    const again = await h.tick('robot_health');
    expect(again.map((outcome) => [outcome.shard, outcome.observed, outcome.skipped])).toEqual([
      [0, 2, undefined],
      [1, 2, undefined],
      [2, 2, undefined],
    ]);
  });

  it('stops a job under way once its upstream is judged degraded, past the sample', async () => {
    const ids = ['DR-1', 'DR-2', 'DR-3', 'DR-4', 'DR-5', 'DR-6'];
    const served = () => h.sim.control.stats().requests['robot:GET /v2/health']?.['200'] ?? 0;
    const before = served();
    h.sim.control.setFaults({ latencyMs: 300, scope: 'robots' });
    const job = h.runner.runJob({ poller: 'robot_health', tick: 1, shard: 0, shards: 1, ids });
    // The first answer is in (counted as it is sent): the second read is under way.
    await expect.poll(served, { timeout: 5_000 }).toBeGreaterThan(before);
    // The upstream poller's judgement, as it stores it: the robot gateway is degraded.
    const [record] = await h.store.read([upstreamRef('robots')]);
    const at = new Date(h.now()).toISOString();
    await h.store.commit(
      upstreamRef('robots'),
      record?.version ?? 0,
      {
        state: { v: 1, health: { alerting: true, streak: 0, streakSince: null, incidentSince: h.now() } },
        observedAt: at,
      },
      [],
    );
    h.advance(1_100);
    const outcome = await job;
    h.sim.control.clearFaults();
    // The read under way when it was judged finishes; the other four wait for the recovery.
    expect(outcome).toMatchObject({ targets: 6, observed: 2 });
    expect(served() - before).toBe(2);
  });
});
