import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { installedCommand } from '../support/installed.js';
import { populatedMetrics } from './exposition.js';

/**
 * The exposition passes `promtool check metrics` (Prometheus's own linter: naming, units,
 * counter suffixes, help texts). promtool comes with the Debian package `prometheus`; `.ci/run`
 * installs it. Without it this test is skipped, and says so.
 */

const promtool = installedCommand('promtool');
if (!promtool) {
  console.warn(
    'test/metrics/promtool.test.ts: SKIPPED — promtool is not installed (apt-get install prometheus), ' +
      'so `promtool check metrics` was not run on the exposition.',
  );
}

function check(text: string): { status: number | null; output: string } {
  const result = spawnSync(promtool as string, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

describe.skipIf(!promtool)('promtool check metrics', () => {
  it('reports nothing on a full exposition (every family with samples, per-entity series on)', async () => {
    const metrics = await populatedMetrics(true);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'fleetwatch_vehicle_power_state{vehicle="V-1",state="on",installation="plant-7"} 1',
    );
    expect(text).toContain(
      'fleetwatch_notification_delivery_seconds_count{installation="plant-7",receiver="ops"} 1',
    );
    expect(text).toContain('fleetwatch_receiver_disabled{receiver="ops",installation="plant-7"} 1');
    expect(text).toContain('fleetwatch_upstream_degraded{upstream="robots",installation="plant-7"} 1');
    expect(text).toContain('fleetwatch_build_info{version=');
    expect(check(text)).toEqual({ status: 0, output: '' });
  });

  it('reports nothing with per-entity series off', async () => {
    const metrics = await populatedMetrics(false);
    expect(check(await metrics.registry.metrics())).toEqual({ status: 0, output: '' });
  });

  it('is a real check: it flags a gauge ending in _total', () => {
    const bad = '# HELP fleetwatch_x_total x\n# TYPE fleetwatch_x_total gauge\nfleetwatch_x_total 1\n';
    const result = check(bad);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('_total');
  });
});
