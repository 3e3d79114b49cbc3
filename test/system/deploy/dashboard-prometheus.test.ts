import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../../src/daemon/index.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import {
  allPanels,
  type Panel,
  readDashboard,
  type Target,
  variableQuery,
} from '../../deploy/dashboard-model.js';
import { exposedValue } from '../../metrics/helpers.js';
import { silent } from '../../notifiers/delivery/helpers.js';
import { newSecret } from '../../notifiers/receivers/webhook/helpers.js';
import { testConfig } from '../../pollers/harness.js';
import { printOnFailure, webhookNotifications } from '../../support/daemon-process.js';
import { installedCommand } from '../../support/installed.js';
import { PrometheusServer, type QueryResult } from '../../support/prometheus-server.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../../support/redis.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * Every query of the Grafana dashboard (deploy/grafana/dashboards/fleetwatch.json), its panels' and
 * its variables', against a REAL Prometheus (Debian's) scraping a fleetwatch daemon every second,
 * with the template variables filled in as Grafana fills them: each must return data. The daemon
 * watches a simulated fleet made to produce what the panels show (vehicles on, off and of unknown
 * power, a robot going down behind 503s, a notification delivered to a webhook). The shipped alert
 * rules are loaded too, and must evaluate without error.
 */

const JOB = 'fleetwatch';
const INSTALLATION = 'obs-e2e';
/** What Grafana makes of `$__rate_interval` with a 1 s scrape interval: four of them. */
const RATE_INTERVAL = '4s';
/** How long the panels get to show data. */
const DATA_DEADLINE_MS = 60_000;
const RULES = fileURLToPath(
  new URL('../../../deploy/prometheus/rules/fleetwatch.rules.yml', import.meta.url),
);

const prometheusBinary = installedCommand('prometheus');
if (!prometheusBinary) {
  console.warn(
    'test/system/deploy/dashboard-prometheus.test.ts: SKIPPED — prometheus is not installed ' +
      '(apt-get install prometheus), so the dashboard queries were not run against a real Prometheus.',
  );
}

/** A value as Grafana writes it into a regex matcher (`=~"..."`): special characters escaped. */
function regexValue(values: readonly string[]): string {
  const escaped = values.map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&'));
  return escaped.length === 1 ? (escaped[0] as string) : `(${escaped.join('|')})`;
}

/** The query with the dashboard's variables filled in as Grafana would. */
function substitute(expr: string, values: Readonly<Record<string, readonly string[]>>, rangeSeconds: number) {
  return expr
    .replaceAll('$__rate_interval', RATE_INTERVAL)
    .replaceAll('$__range', `${rangeSeconds}s`)
    .replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced?: string, bare?: string) => {
      const name = braced ?? bare ?? '';
      const value = values[name];
      if (!value) throw new Error(`${whole} is not a variable of the dashboard: ${expr}`);
      return regexValue(value);
    });
}

const hasNumber = (value: string) => Number.isFinite(Number(value));

/** Whether a result holds at least one finite sample (NaN is what Grafana shows as no data). */
function hasData(result: QueryResult): boolean {
  return result.result.some((series) =>
    series.value ? hasNumber(series.value[1]) : (series.values ?? []).some(([, value]) => hasNumber(value)),
  );
}

describe.skipIf(!prometheusBinary)('the Grafana dashboard against a real Prometheus', () => {
  const prefix = uniquePrefix('dash');
  const secret = newSecret();
  let sim: Simulator;
  let receiver: WebhookReceiver;
  let daemon: Daemon | undefined;
  let prometheus: PrometheusServer | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 0, robots: 0, seed: 42, behaviours: false });
    const fresh = new Date().toISOString();
    sim.control.addVehicle({ id: 'V-1', vpnConnected: true, state: 'on', updatedAt: fresh });
    sim.control.addVehicle({ id: 'V-2', vpnConnected: true, state: 'off', updatedAt: fresh });
    sim.control.addVehicle({ id: 'V-3', vpnConnected: true, state: 'unknown', updatedAt: fresh });
    sim.control.addRobot({ deviceId: 'R-1', feedback: { cortexStatus: 1 } });
    sim.control.addRobot({ deviceId: 'R-2', feedback: { cortexStatus: 2 }, unhealthyMode: 'error' });
    receiver = await WebhookReceiver.start({ secret });
  });

  afterAll(async () => {
    await prometheus?.stop();
    await daemon?.stop();
    await receiver?.close();
    await sim?.close();
    const admin = connect();
    await deletePrefixKeys(admin, prefix);
    admin.disconnect();
  });

  it('answers every panel and variable query with data', { timeout: 90_000 }, async (context) => {
    const config = testConfig(sim.url, prefix, {
      installation: INSTALLATION,
      metrics: { fleet_cache: '0s' },
      pollers: { robot_config: { enabled: false } },
      ...webhookNotifications(receiver.url, secret, '1h'),
    });
    const fw = startDaemon(config, { logger: silent });
    daemon = fw;
    const address = await fw.http?.listening;
    if (!address) throw new Error('the daemon did not listen');
    const target = new URL(address).host;
    const started = Math.floor(Date.now() / 1000);
    prometheus = await PrometheusServer.start({
      binary: prometheusBinary as string,
      job: JOB,
      targets: [target],
      ruleFiles: [RULES],
    });
    const prom = prometheus;
    printOnFailure(context, () => `${prom.output()}\n--- webhook: ${receiver.accepted().length} deliveries`);

    // Prometheus has scraped the daemon, so what follows shows as a change (in rate(), increase()).
    await eventually(
      () => prom.query(`up{job="${JOB}"} == 1`),
      (result) => result.result.length === 1,
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    // The fleet learned (its baseline), then changes: a vehicle leaves the VPN (an event, notified
    // to the webhook), a robot answers 503 (upstream errors, observation errors, robot down).
    await eventually(
      () => fw.metrics.registry.metrics(),
      (text) => exposedValue(text, 'fleetwatch_vehicles{vpn="connected"}') === 3,
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    sim.control.updateVehicle('V-1', { vpnConnected: false });
    sim.control.updateRobot('R-2', { healthy: false });
    await receiver.waitFor(1, 20_000);

    // The variables, in order, each query with the ones before it filled in.
    const dashboard = readDashboard();
    const values: Record<string, string[]> = {};
    for (const variable of dashboard.templating.list) {
      if (variable.type === 'datasource') continue;
      const query = variableQuery(variable) ?? '';
      const parsed = /^label_values\((.+),\s*(\w+)\)$/.exec(query);
      if (!parsed) throw new Error(`variable ${variable.name}: not a label_values query: ${query}`);
      const found = await eventually(
        () => prom.labelValues(parsed[2] as string, substitute(parsed[1] as string, values, 60)),
        (answer) => answer.length > 0,
        { timeoutMs: 15_000, intervalMs: 250 },
      );
      values[variable.name] = found;
    }
    expect(values).toEqual({ job: [JOB], installation: [INSTALLATION], instance: [target] });

    // Every panel query, until each has data or the deadline passes.
    const targets = allPanels(dashboard.panels).flatMap((panel: Panel) =>
      (panel.targets ?? []).map((each: Target) => ({
        panel: panel.title ?? `panel ${panel.id}`,
        target: each,
      })),
    );
    expect(targets.length).toBeGreaterThan(30);
    let waiting = targets;
    const deadline = Date.now() + DATA_DEADLINE_MS;
    for (;;) {
      const now = Math.floor(Date.now() / 1000);
      const answered = await Promise.all(
        waiting.map(async (each) => {
          const expr = substitute(each.target.expr ?? '', values, Math.max(60, now - started));
          const result = each.target.instant
            ? await prom.query(expr, now)
            : await prom.queryRange(expr, started, now, 1);
          return hasData(result);
        }),
      );
      waiting = waiting.filter((_, index) => !answered[index]);
      if (waiting.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    const empty = waiting.map(({ panel, target: each }) => `"${panel}" ${each.refId}: ${each.expr}`);
    expect(empty, `panels without data after ${DATA_DEADLINE_MS / 1000} s:\n${empty.join('\n')}`).toEqual([]);

    // The power panel has every vehicle, whatever its state: on 2, off 1, unknown 0.
    const power = allPanels(dashboard.panels).find((panel) => panel.title === 'Power state per vehicle');
    const powerResult = await prom.query(substitute(power?.targets?.[0]?.expr ?? '', values, 60));
    const byVehicle = Object.fromEntries(
      powerResult.result.map((series) => [series.metric.vehicle, Number(series.value?.[1])]),
    );
    expect(byVehicle).toEqual({ 'V-1': 2, 'V-2': 1, 'V-3': 0 });

    // The shipped alert rules load into this Prometheus and evaluate without error.
    const rules = await eventually(
      () =>
        prom.api<{
          groups: { rules: { name: string; health: string; lastError?: string; lastEvaluation: string }[] }[];
        }>('rules'),
      (data) =>
        data.groups.flatMap((group) => group.rules).every((rule) => !rule.lastEvaluation.startsWith('0001')),
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    const evaluated = rules.groups.flatMap((group) => group.rules);
    expect(evaluated.length).toBeGreaterThanOrEqual(10);
    expect(evaluated.filter((rule) => rule.health !== 'ok')).toEqual([]);
  });
});
