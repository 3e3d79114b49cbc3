import { describe, expect, it } from 'vitest';
import {
  createMetrics,
  DROPPED_DEFAULT_METRICS,
  METRIC_DEFINITIONS,
  METRIC_NAMES,
  METRIC_PREFIX,
  seriesNames,
} from '../../src/metrics/index.js';
import { labelNameProblems, metricNameProblems } from '../../src/metrics/naming.js';
import { populatedMetrics } from './exposition.js';

/** Prometheus naming rules, checked on what the registry really exports (default metrics included). */

describe('metric names', () => {
  it('every exported family follows the rules: prefix, snake_case, counters and only counters end in _total', async () => {
    const metrics = await populatedMetrics();
    const families = await metrics.registry.getMetricsAsJSON();
    expect(families.length).toBeGreaterThan(METRIC_DEFINITIONS.length);
    const problems = families.flatMap((family) => [
      // prom-client types `type` as a numeric enum; at run time it is the text ('counter', ...).
      ...metricNameProblems(family.name, String(family.type)),
      ...labelNameProblems(
        family.name,
        [...new Set(family.values.flatMap((value) => Object.keys(value.labels)))].filter(
          (label) => label !== 'le',
        ),
      ),
    ]);
    expect(problems).toEqual([]);
    for (const family of families) {
      expect(family.name.startsWith(METRIC_PREFIX), family.name).toBe(true);
      expect(family.name, family.name).toBe(family.name.toLowerCase());
      expect(family.name.endsWith('_total'), family.name).toBe(String(family.type) === 'counter');
      expect(family.help.length, family.name).toBeGreaterThan(10);
    }
  });

  it('the catalogue follows them too, and durations are in seconds', () => {
    for (const metric of METRIC_DEFINITIONS) {
      expect(metricNameProblems(metric.name, metric.type)).toEqual([]);
      expect(labelNameProblems(metric.name, metric.labels)).toEqual([]);
      if (metric.type === 'histogram') expect(metric.name).toMatch(/_seconds$/);
      // No ids in names: entities are labels.
      expect(metric.name).not.toMatch(/\d/);
    }
    expect(new Set(METRIC_NAMES).size).toBe(METRIC_NAMES.length);
  });

  it('the checker catches what it should', () => {
    expect(metricNameProblems('fleetwatch_jobs', 'counter')).toEqual([
      'fleetwatch_jobs: a counter must end in _total',
    ]);
    expect(metricNameProblems('fleetwatch_jobs_total', 'gauge')).toEqual([
      'fleetwatch_jobs_total: only counters end in _total',
    ]);
    expect(metricNameProblems('fleetwatch_pollDuration_seconds', 'histogram')).toHaveLength(1);
    expect(metricNameProblems('poll_duration_seconds', 'histogram')).toHaveLength(1);
    expect(metricNameProblems('fleetwatch_poll_duration_ms', 'histogram')[0]).toContain('not a base unit');
    expect(labelNameProblems('fleetwatch_x', ['vehicleId', 'le'])).toHaveLength(2);
  });

  it('names lists every exported family; per-entity families go with per_entity', async () => {
    const metrics = await populatedMetrics();
    const exported = (await metrics.registry.getMetricsAsJSON()).map((family) => family.name);
    expect(metrics.contentType).toBe(metrics.registry.contentType);
    expect(await metrics.text()).toContain('# TYPE fleetwatch_vehicles gauge');
    expect([...metrics.names].sort()).toEqual([...exported].sort());
    for (const name of METRIC_NAMES) expect(metrics.names).toContain(name);
    for (const name of DROPPED_DEFAULT_METRICS) expect(metrics.names).not.toContain(name);
    expect(metrics.names).toContain('fleetwatch_process_cpu_seconds_total');

    const totals = await populatedMetrics(false);
    const perEntity = METRIC_DEFINITIONS.filter((metric) => metric.perEntity).map((metric) => metric.name);
    expect(perEntity.length).toBe(5);
    for (const name of perEntity) expect(totals.names).not.toContain(name);
  });

  it("leaves the poll thread's families out without a poll thread", () => {
    const pollThread = METRIC_DEFINITIONS.filter((metric) => metric.pollThread).map((metric) => metric.name);
    expect(pollThread.length).toBe(3);
    const inProcess = createMetrics({ perEntity: true, defaultMetrics: false });
    for (const name of pollThread) expect(inProcess.names).not.toContain(name);
    const threaded = createMetrics({ perEntity: true, defaultMetrics: false, pollThread: true });
    for (const name of pollThread) expect(threaded.names).toContain(name);
  });

  it('seriesNames expands histograms into the sample names a query uses', () => {
    expect(seriesNames(['fleetwatch_poll_duration_seconds', 'fleetwatch_vehicles'])).toEqual([
      'fleetwatch_poll_duration_seconds_bucket',
      'fleetwatch_poll_duration_seconds_sum',
      'fleetwatch_poll_duration_seconds_count',
      'fleetwatch_vehicles',
    ]);
  });
});
