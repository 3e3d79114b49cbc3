import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { allPanels, readDashboard, variableQuery } from './dashboard-model.js';
import { familyOf, metricNamesIn } from './promql.js';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

const dashboard = readDashboard();
const panels = allPanels(dashboard.panels);
const queried = panels.filter((panel) => (panel.targets ?? []).length > 0);
const byTitle = (title: string) => panels.find((panel) => panel.title === title);

interface ExportedFamilies {
  names: ReadonlySet<string>;
  isHistogram: (name: string) => boolean;
}

/**
 * What fleetwatch exports, from its own metrics module (`src/metrics/`): the names a daemon's
 * registry really exports (`createMetrics(...).names`, per-entity families on), with each family's
 * type from the catalogue. Imported by a computed path, so this file compiles before the module
 * exists; a missing module fails the tests that need it with a message saying so.
 */
async function exportedFamilies(): Promise<ExportedFamilies> {
  const path = '../../src/metrics/index.js';
  let metrics: Record<string, unknown>;
  try {
    metrics = (await import(/* @vite-ignore */ path)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(
      `cannot check the dashboard: the metrics module src/metrics/index.ts is missing or does not load ` +
        `(${(error as Error).message.split('\n')[0]}); it must export createMetrics() whose result has ` +
        '`names`, the metric families fleetwatch exports',
    );
  }
  const create = metrics.createMetrics as
    | ((options: { perEntity: boolean }) => { names: readonly string[] })
    | undefined;
  const names =
    create?.({ perEntity: true }).names ?? (metrics.METRIC_NAMES as readonly string[] | undefined);
  if (!names || names.length === 0) {
    throw new Error('src/metrics/index.ts exports neither createMetrics().names nor METRIC_NAMES');
  }
  const definitions = (metrics.METRIC_DEFINITIONS ?? []) as readonly { name: string; type: string }[];
  const types = new Map(definitions.map((definition) => [definition.name, definition.type]));
  return {
    names: new Set(names),
    // Without a catalogue of types, any family may be a histogram (names alone then decide).
    isHistogram: (name) => (types.size === 0 ? true : types.get(name) === 'histogram'),
  };
}

describe('PromQL metric name extraction', () => {
  it.each([
    ['sum by (type) (rate(fleetwatch_events_total[$__rate_interval]))', ['fleetwatch_events_total']],
    [
      'histogram_quantile(0.95, sum by (le, receiver) (rate(fleetwatch_notification_delivery_seconds_bucket[5m])))',
      ['fleetwatch_notification_delivery_seconds_bucket'],
    ],
    [
      'sum by (status) (rate(fleetwatch_upstream_requests_total{status!~"2..", operation="list {x}"}[1m]))',
      ['fleetwatch_upstream_requests_total'],
    ],
    [
      'max by (vehicle) (a{state="on"}) * 2 + on(vehicle) group_left max(b) by (vehicle) offset 5m',
      ['a', 'b'],
    ],
    ['sort_desc(sum(increase(x_total[$__range]))) > 1e3 and count(up) unless y', ['x_total', 'up', 'y']],
    ['rate(${metric}[5m]) + z[[interval]]', ['z']],
  ])('%s', (expr, expected) => {
    expect(metricNamesIn(expr)).toEqual(expected);
  });

  it('maps histogram samples to their family, and nothing else', () => {
    const families = new Set(['h_seconds', 'c_total', 'g']);
    const isHistogram = (name: string) => name === 'h_seconds';
    expect(familyOf('h_seconds_bucket', families, isHistogram)).toBe('h_seconds');
    expect(familyOf('h_seconds_count', families, isHistogram)).toBe('h_seconds');
    expect(familyOf('c_total', families, isHistogram)).toBe('c_total');
    expect(familyOf('g_count', families, isHistogram)).toBeUndefined();
    expect(familyOf('nope', families, isHistogram)).toBeUndefined();
  });
});

describe('Grafana dashboard deploy/grafana/dashboards/fleetwatch.json', () => {
  let exported: ExportedFamilies;
  beforeAll(async () => {
    exported = await exportedFamilies();
  });

  it('reads only metric families fleetwatch exports', () => {
    const unknown: string[] = [];
    let checked = 0;
    for (const panel of queried) {
      for (const target of panel.targets ?? []) {
        expect(target.expr, `${panel.title} ${target.refId}`).toBeTruthy();
        for (const name of metricNamesIn(target.expr ?? '')) {
          checked += 1;
          if (!familyOf(name, exported.names, exported.isHistogram)) {
            unknown.push(`"${panel.title}" ${target.refId}: ${name}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(unknown, `not exported by fleetwatch (src/metrics/):\n${unknown.join('\n')}`).toEqual([]);
  });

  it('covers the fleet, events, notifications, upstream, pollers and queues', () => {
    const used = new Set(
      queried.flatMap((panel) =>
        (panel.targets ?? []).flatMap((target) =>
          metricNamesIn(target.expr ?? '').map(
            (name) => familyOf(name, exported.names, exported.isHistogram) ?? name,
          ),
        ),
      ),
    );
    for (const family of [
      'fleetwatch_vehicles',
      'fleetwatch_vehicles_by_power',
      'fleetwatch_vehicle_power_commands',
      'fleetwatch_robots',
      'fleetwatch_vehicle_vpn_connected',
      'fleetwatch_vehicle_power_state',
      'fleetwatch_robot_up',
      'fleetwatch_robot_autonomy_status',
      'fleetwatch_events_total',
      'fleetwatch_notifications_total',
      'fleetwatch_notification_delivery_seconds',
      'fleetwatch_notifications_suppressed_total',
      'fleetwatch_upstream_requests_total',
      'fleetwatch_upstream_request_duration_seconds',
      'fleetwatch_poll_duration_seconds',
      'fleetwatch_poll_lag_seconds',
      'fleetwatch_observation_errors_total',
      'fleetwatch_queue_jobs',
      'fleetwatch_dead_letters',
    ]) {
      expect(used, family).toContain(family);
    }
    expect(byTitle('Power state per vehicle')?.type).toBe('state-timeline');
    expect(byTitle('Robot health')?.type).toBe('state-timeline');
    expect(byTitle('VPN link per vehicle')?.type).toBe('state-timeline');
    const latency = byTitle('Delivery latency (event → delivered)');
    expect(latency?.targets?.every((target) => target.expr?.startsWith('histogram_quantile('))).toBe(true);
  });

  it('queries the Prometheus chosen in its datasource variable, and the provisioned one is the default', () => {
    const provisioned = parse(read('deploy/grafana/provisioning/datasources/prometheus.yaml')) as {
      apiVersion: number;
      datasources: { uid: string; type: string; url: string; isDefault?: boolean }[];
    };
    expect(provisioned.apiVersion).toBe(1);
    expect(provisioned.datasources).toHaveLength(1);
    expect(provisioned.datasources[0]).toMatchObject({
      type: 'prometheus',
      url: 'http://prometheus:9090',
      isDefault: true,
    });
    const viaVariable = { type: 'prometheus', uid: '${datasource}' };
    for (const panel of queried) {
      expect(panel.datasource, panel.title).toEqual(viaVariable);
      for (const target of panel.targets ?? []) {
        expect(target.datasource ?? panel.datasource, `${panel.title} ${target.refId}`).toEqual(viaVariable);
      }
    }
    // No data source of one Grafana is named anywhere.
    expect(read('deploy/grafana/dashboards/fleetwatch.json')).not.toContain(provisioned.datasources[0]?.uid);
  });

  it('has the datasource, job, installation and instance variables, and every query filters on the three', () => {
    const variables = dashboard.templating.list;
    expect(variables.map((variable) => variable.name)).toEqual([
      'datasource',
      'job',
      'installation',
      'instance',
    ]);
    const [datasource, ...queries] = variables;
    expect(datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const variable of queries) {
      expect(variable, variable.name).toMatchObject({
        type: 'query',
        datasource: { type: 'prometheus', uid: '${datasource}' },
        includeAll: true,
        multi: true,
      });
      expect(variableQuery(variable), variable.name).toMatch(
        new RegExp(`^label_values\\(fleetwatch_build_info(\\{[^}]*\\})?, ${variable.name}\\)$`),
      );
    }
    const unfiltered: string[] = [];
    for (const panel of queried) {
      for (const target of panel.targets ?? []) {
        for (const selector of (target.expr ?? '').matchAll(/fleetwatch_[a-z_]+(\{[^}]*\})?/g)) {
          const labels = selector[1] ?? '';
          for (const filter of ['job=~"$job"', 'installation=~"$installation"', 'instance=~"$instance"']) {
            if (!labels.includes(filter))
              unfiltered.push(`"${panel.title}" ${target.refId}: ${selector[0]} lacks ${filter}`);
          }
        }
      }
    }
    expect(unfiltered, unfiltered.join('\n')).toEqual([]);
  });

  it('imports through the UI: __inputs names a Prometheus input that becomes the default data source', () => {
    expect(dashboard.__inputs).toEqual([
      expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }),
    ]);
    expect(dashboard.templating.list[0]?.current).toMatchObject({ value: '${DS_PROMETHEUS}' });
    const required = new Set(dashboard.__requires.map((entry) => `${entry.type}:${entry.id}`));
    expect(required).toContain('grafana:grafana');
    expect(required).toContain('datasource:prometheus');
    for (const panel of panels.filter((each) => each.type !== 'row')) {
      expect(required, panel.title).toContain(`panel:${panel.type}`);
    }
  });

  it('joins the power states of a vehicle with or: each vehicle exports only its current one', () => {
    const [target] = byTitle('Power state per vehicle')?.targets ?? [];
    const states = [...(target?.expr ?? '').matchAll(/state="(on|off|unknown)"/g)].map((match) => match[1]);
    expect(states).toEqual(['on', 'off', 'unknown']);
    expect(target?.expr).not.toMatch(/\)\s*[+]\s*max/);
    expect(target?.expr?.match(/ or /g)).toHaveLength(2);
  });

  it('is a well-formed dashboard: unique ids and refIds, panels inside the 24-column grid', () => {
    expect(dashboard.uid).toBe('fleetwatch');
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels) {
      const grid = panel.gridPos;
      expect(grid, panel.title).toBeDefined();
      expect(grid!.x + grid!.w, panel.title).toBeLessThanOrEqual(24);
      const refIds = (panel.targets ?? []).map((target) => target.refId);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
    }
  });

  it('is loaded by the file provider from where docker-compose.yml mounts it', () => {
    const provider = parse(read('deploy/grafana/provisioning/dashboards/fleetwatch.yaml')) as {
      apiVersion: number;
      providers: { type: string; options: { path: string } }[];
    };
    expect(provider.apiVersion).toBe(1);
    expect(provider.providers[0]?.type).toBe('file');
    const compose = parse(read('docker-compose.yml'), { merge: true }) as {
      services: Record<string, { volumes?: string[] }>;
    };
    expect(compose.services.grafana?.volumes).toContain(
      `./deploy/grafana/dashboards:${provider.providers[0]?.options.path}:ro`,
    );
  });
});
