import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { METRIC_DEFINITIONS } from '../../src/metrics/index.js';
import { installedCommand } from '../support/installed.js';
import { familyOf, metricNamesIn } from './promql.js';

/**
 * The alert rules shipped for fleetwatch's own health (deploy/prometheus/rules/): promtool accepts
 * them, `promtool test rules` passes with a case that fires and one that does not for EVERY alert,
 * every metric they read is one fleetwatch exports, every alert says how bad, what and where its
 * runbook is, and Prometheus (prometheus.yml, docker-compose.yml) loads them.
 */

const ROOT = new URL('../../', import.meta.url);
const RULES_DIR = fileURLToPath(new URL('deploy/prometheus/rules/', ROOT));
const RULES_FILE = 'fleetwatch.rules.yml';
const TESTS_FILE = 'fleetwatch.rules.test.yml';
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleTests {
  rule_files: string[];
  tests: {
    input_series: { series: string; values: string }[];
    alert_rule_test?: { eval_time: string; alertname: string; exp_alerts?: unknown[] }[];
  }[];
}

const rules = (
  parse(read(`deploy/prometheus/rules/${RULES_FILE}`)) as { groups: { rules: Rule[] }[] }
).groups.flatMap((group) => group.rules);
const alerts = rules.filter((rule): rule is Rule & { alert: string } => rule.alert !== undefined);
const ruleTests = parse(read(`deploy/prometheus/rules/${TESTS_FILE}`)) as RuleTests;
const readme = read('README.md');

const promtool = installedCommand('promtool');
if (!promtool) {
  console.warn(
    'test/deploy/alert-rules.test.ts: SKIPPED the promtool checks — promtool is not installed ' +
      '(apt-get install prometheus), so `promtool check rules` and `promtool test rules` were not run.',
  );
}

function run(args: readonly string[], cwd = RULES_DIR): { status: number | null; output: string } {
  const result = spawnSync(promtool as string, args, { cwd, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!promtool)('promtool on deploy/prometheus/rules', () => {
  it('check rules accepts the rules', () => {
    const result = run(['check', 'rules', RULES_FILE]);
    expect(result.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(result.status, result.output).toBe(0);
  });

  it('test rules passes the unit tests', () => {
    const result = run(['test', 'rules', TESTS_FILE]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain('SUCCESS');
  });

  it('is a real test: a case expecting an alert that does not fire fails', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-rules-'));
    scratch.push(dir);
    writeFileSync(join(dir, RULES_FILE), read(`deploy/prometheus/rules/${RULES_FILE}`));
    const broken = structuredClone(ruleTests);
    const silent = broken.tests
      .flatMap((test) => test.alert_rule_test ?? [])
      .find((check) => (check.exp_alerts ?? []).length === 0);
    if (!silent) throw new Error(`${TESTS_FILE} has no case where an alert stays silent`);
    silent.exp_alerts = [{ exp_labels: { severity: 'critical' } }];
    writeFileSync(join(dir, TESTS_FILE), stringify(broken));
    const result = run(['test', 'rules', TESTS_FILE], dir);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(`alertname: ${silent.alertname}`);
  });

  it('prometheus.yml loads the rules (check config follows rule_files)', () => {
    const result = run(['check', 'config', 'prometheus.yml'], join(RULES_DIR, '..'));
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain(`SUCCESS: ${rules.length} rules found`);
  });
});

describe('the alert rules', () => {
  it('test every alert firing and not firing', () => {
    const checks = ruleTests.tests.flatMap((test) => test.alert_rule_test ?? []);
    expect(ruleTests.rule_files).toEqual([RULES_FILE]);
    const missing: string[] = [];
    for (const { alert } of alerts) {
      const own = checks.filter((check) => check.alertname === alert);
      if (!own.some((check) => (check.exp_alerts ?? []).length > 0))
        missing.push(`${alert}: no case that fires`);
      if (!own.some((check) => (check.exp_alerts ?? []).length === 0))
        missing.push(`${alert}: no silent case`);
    }
    expect(missing, `${TESTS_FILE} lacks:\n${missing.join('\n')}`).toEqual([]);
    expect(alerts.length).toBeGreaterThanOrEqual(10);
  });

  it('read only metrics fleetwatch exports (the catalogue) and Prometheus own up', () => {
    const families = new Set(METRIC_DEFINITIONS.map((metric) => metric.name));
    const types = new Map(METRIC_DEFINITIONS.map((metric) => [metric.name, metric.type]));
    const isHistogram = (name: string) => types.get(name) === 'histogram';
    const unknown: string[] = [];
    const read = new Set<string>();
    for (const rule of rules) {
      for (const name of metricNamesIn(rule.expr)) {
        const family = name === 'up' ? name : familyOf(name, families, isHistogram);
        if (family === undefined) unknown.push(`${rule.alert ?? rule.record}: ${name}`);
        else read.add(family);
      }
    }
    expect(unknown, `not in src/metrics/catalogue.ts:\n${unknown.join('\n')}`).toEqual([]);
    // What the rules are about, each read by at least one rule.
    for (const family of [
      'up',
      'fleetwatch_poll_jobs_total',
      'fleetwatch_poll_cycle_overrun_total',
      'fleetwatch_poll_lag_seconds',
      'fleetwatch_poll_interval_seconds',
      'fleetwatch_fleet_read_timestamp_seconds',
      'fleetwatch_dead_letters',
      'fleetwatch_receiver_disabled',
      'fleetwatch_receiver_held_until_timestamp_seconds',
      'fleetwatch_upstream_requests_total',
      'fleetwatch_upstream_degraded',
      'fleetwatch_redis_state',
    ]) {
      expect(read, family).toContain(family);
    }
  });

  it.each(alerts.map((rule) => [rule.alert, rule] as const))(
    '%s waits, says how bad and links its runbook',
    (name, rule) => {
      expect(rule.for, 'for').toMatch(/^[1-9][0-9]*[smh]$/);
      expect(['warning', 'critical']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary?.length).toBeGreaterThan(10);
      expect(rule.annotations?.description?.length).toBeGreaterThan(40);
      const anchor = `alert-${name.toLowerCase()}`;
      expect(rule.annotations?.runbook_url).toBe(`README.md#${anchor}`);
      // The runbook: the alert's row in the README's Operations → Alert rules table.
      expect(readme).toContain(`<a id="${anchor}"></a>\`${name}\``);
    },
  );

  it('are mounted where prometheus.yml names them in the docker-compose prometheus service', () => {
    const config = parse(read('deploy/prometheus/prometheus.yml')) as { rule_files: string[] };
    expect(config.rule_files).toEqual([`rules/${RULES_FILE}`]);
    const compose = parse(read('docker-compose.yml'), { merge: true }) as {
      services: Record<string, { command?: string[]; volumes?: string[] }>;
    };
    const prometheus = compose.services.prometheus;
    expect(prometheus?.command).toContain('--config.file=/etc/prometheus/prometheus.yml');
    // The folder with prometheus.yml and rules/, so the relative rule path resolves in the container.
    expect(prometheus?.volumes).toContain('./deploy/prometheus:/etc/prometheus:ro');
  });
});
