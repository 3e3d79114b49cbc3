import { describe, expect, it } from 'vitest';
import { maskConfig, parseConfig } from '../../../../src/config/index.js';
import { registerConfigSecrets } from '../../../../src/config/mask.js';
import { SecretRegistry } from '../../../../src/log/secrets.js';
import { retryPolicyFor } from '../../../../src/notifiers/receivers/kinds.js';
import { pagerDutyNotifierFactory } from '../../../../src/notifiers/receivers/pagerduty/index.js';
import { configProblems } from '../../../support/config-problems.js';

const KEY = 'e93facc04764012d7bfb002500d5d1a6';
const ENV = { FLEET_SECRET: 's3cr3t-value', PAGERDUTY_ROUTING_KEY: KEY };

const BASE = `
upstream:
  base_url: https://fleet.example.com
  robot_base_url: https://robots.example.com
  auth_url: https://auth.example.com
  client_id: fleetwatch
  client_secret: \${FLEET_SECRET}
receivers:
`;

function config(receiver: string) {
  return parseConfig(`${BASE}  - ${receiver}\n`, 'test.yaml', ENV);
}

/** The problems `config check` prints, one line each. */
const problemsOf = (receiver: string): string[] => configProblems(() => config(receiver));

describe('pagerduty receiver config', () => {
  it('needs only a name and a routing key; the rest has documented defaults', () => {
    const [receiver] = config(
      '{ name: on-call, kind: pagerduty, routing_key: "${PAGERDUTY_ROUTING_KEY}" }',
    ).receivers;
    expect(receiver).toEqual({
      kind: 'pagerduty',
      name: 'on-call',
      routing_key: KEY,
      url: 'https://events.pagerduty.com/v2/enqueue',
      timeout: 10_000,
      changes: 'trigger',
      events_per_minute: 120,
      fold_above: 20,
      max_hold: 300_000,
    });
  });

  it('reads every optional key', () => {
    const [receiver] = config(
      `{ name: on-call, kind: pagerduty, routing_key: "${KEY}", url: "http://127.0.0.1:8080/v2/enqueue", timeout: 5s, severity_map: { warning: error, info: warning }, changes: skip, events_per_minute: 60, fold_above: 500, max_hold: 2m }`,
    ).receivers;
    expect(receiver).toMatchObject({
      url: 'http://127.0.0.1:8080/v2/enqueue',
      timeout: 5_000,
      severity_map: { warning: 'error', info: 'warning' },
      changes: 'skip',
      events_per_minute: 60,
      fold_above: 500,
      max_hold: 120_000,
    });
  });

  it.each([
    ['a short routing key', 'routing_key: "abc123"'],
    ['a routing key with a space', `routing_key: "${KEY.slice(0, 31)} "`],
    ['an unset variable', 'routing_key: "${PAGERDUTY_KEY_TYPO:-}"'],
  ])('refuses %s, naming the field and not the value', (_what, field) => {
    const problems = problemsOf(`{ name: on-call, kind: pagerduty, ${field} }`);
    expect(problems).toEqual([
      'receivers[0].routing_key: must be the 32-character integration key of a PagerDuty Events API v2 ' +
        'integration, given through an environment variable such as ${PAGERDUTY_ROUTING_KEY}',
    ]);
  });

  it('names each field with a problem', () => {
    expect(
      problemsOf(
        `{ name: on-call, kind: pagerduty, routing_key: "${KEY}", url: "ftp://x", timeout: 1h, severity_map: { warning: high, fatal: critical }, changes: maybe, events_per_minute: 0, fold_above: 0, max_hold: 0 }`,
      ),
    ).toEqual([
      'receivers[0].max_hold: expected a duration between 1s and 1d, like 30s; got 0',
      'receivers[0].url: must be an http(s) URL',
      'receivers[0].timeout: expected a duration between 100ms and 2m, like 30s; got 1h',
      'receivers[0].severity_map.warning: expected one of critical, error, warning, info',
      'receivers[0].severity_map: unknown field "fatal" (expected one of info, warning, critical)',
      'receivers[0].changes: expected trigger or skip',
      'receivers[0].events_per_minute: expected a whole number between 1 and 1000; got 0',
      'receivers[0].fold_above: expected a whole number between 1 and 100000; got 0',
    ]);
  });

  it('masks the routing key for config check and registers it for scrubbing', () => {
    const parsed = config('{ name: on-call, kind: pagerduty, routing_key: "${PAGERDUTY_ROUTING_KEY}" }');
    expect(JSON.stringify(maskConfig(parsed))).not.toContain(KEY);
    expect(maskConfig(parsed).receivers[0]).toMatchObject({ routing_key: '[REDACTED]' });
    const registry = new SecretRegistry();
    registerConfigSecrets(parsed, registry);
    expect(registry.scrub(`key ${KEY}`)).toBe('key [REDACTED]');
  });

  it('retries 15 times with exponential back-off from 2 s to 5 min, with full jitter', () => {
    const [receiver] = config(`{ name: on-call, kind: pagerduty, routing_key: "${KEY}" }`).receivers;
    if (!receiver) throw new Error('no receiver');
    const top = () => 0.999_999;
    const policy = retryPolicyFor(receiver, { random: top });
    expect(policy.attempts).toBe(15);
    expect([2, 3, 4, 9, 10, 15, 16].map((attempt) => policy.delayBefore(attempt))).toEqual([
      2_000,
      4_000,
      8_000,
      256_000,
      300_000,
      300_000,
      undefined,
    ]);
    expect(pagerDutyNotifierFactory.retryPolicy(receiver as never).description).toBe(
      '15 attempts, exponential back-off (full jitter) from 2000 ms to 300000 ms',
    );
  });
});
