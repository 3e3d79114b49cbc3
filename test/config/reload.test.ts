import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { changedPaths, configProblems, diffConfig, planReload, sameValue } from '../../src/config/reload.js';
import type { Config } from '../../src/config/schema.js';

/** What a reload takes live, what it keeps until a restart, and how it names either. */

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function config(extra = '', routeTo = 'a'): Config {
  return parseConfig(
    `
upstream:
  base_url: http://127.0.0.1:8080
  robot_base_url: http://127.0.0.1:8080
  auth_url: http://127.0.0.1:8080
  client_id: fleetwatch
  client_secret: \${SECRET}
redis: { url: redis://127.0.0.1:6379, prefix: fw-reload-test }
receivers:
  - { kind: webhook, name: a, url: http://127.0.0.1:9001/hook, secrets: ['\${SECRET}'] }
  - { kind: console, name: b }
notifications:
  route: { receiver: ${routeTo} }
${extra}`,
    'fleetwatch.yaml',
    { SECRET },
  );
}

describe('diffConfig', () => {
  it('finds nothing between two readings of the same file', () => {
    expect(diffConfig(config(), config())).toEqual({
      live: [],
      restart: [],
      receivers: { added: [], removed: [], changed: [] },
    });
  });

  it('names changed live settings by path, receivers by name', () => {
    const before = config();
    const after = structuredClone(before);
    after.notifications.route = { ...after.notifications.route!, receiver: 'b' };
    after.receivers = [
      { ...after.receivers[0]!, url: 'http://127.0.0.1:9002/hook' },
      { kind: 'console', name: 'c', max_hold: 300_000 },
    ] as Config['receivers'];
    after.detectors.vpn.failure_threshold = 5;
    const diff = diffConfig(before, after);
    expect(diff.receivers).toEqual({ added: ['c'], removed: ['b'], changed: ['a'] });
    expect(diff.live).toEqual([
      'detectors.vpn.failure_threshold',
      'notifications.route.receiver',
      'receivers.a',
      'receivers.b',
      'receivers.c',
    ]);
    expect(diff.restart).toEqual([]);
  });

  it('names settings that need a restart, and never their values', () => {
    const before = config();
    const after = structuredClone(before);
    after.redis.url = 'redis://:hunter2-password@127.0.0.1:6380';
    after.worker.concurrency = 2;
    after.http.port = 9999;
    after.pollers.vehicles.interval = 5_000;
    after.upstream.client_secret = 'another-secret';
    const diff = diffConfig(before, after);
    expect(diff.restart).toEqual([
      'http.port',
      'pollers.vehicles.interval',
      'redis.url',
      'upstream.client_secret',
      'worker.concurrency',
    ]);
    expect(diff.live).toEqual([]);
    expect(JSON.stringify(diff)).not.toMatch(/hunter2|another-secret|6380/);
  });

  it('counts a list as one setting', () => {
    expect(changedPaths({ tokens: [1, 2] }, { tokens: [1, 3] }, 'http')).toEqual(['http.tokens']);
    expect(changedPaths({ a: { b: 1 } }, { a: { b: 1, c: undefined } }, 'x')).toEqual([]);
    expect(sameValue({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(sameValue({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe(false);
  });
});

describe('planReload', () => {
  it('takes the live sections and keeps every other section in force', () => {
    const before = config();
    const after = config(`
detectors: { vpn: { failure_threshold: 4 } }
worker: { concurrency: 3 }
console: { url: https://fleetwatch.example.com }
`);
    after.redis.prefix = 'fw-reload-other';
    const { config: next, diff } = planReload(before, after);
    expect(next.detectors.vpn.failure_threshold).toBe(4);
    expect(next.console.url).toBe('https://fleetwatch.example.com');
    expect(next.worker).toBe(before.worker);
    expect(next.redis).toBe(before.redis);
    expect(diff.restart).toEqual(['redis.prefix', 'worker.concurrency']);
    // An unchanged live section stays the same object: its readers keep what they built from it.
    expect(next.receivers).toBe(before.receivers);
    expect(next.notifications).toBe(before.notifications);
  });
});

describe('configProblems', () => {
  it('words a refused file as config check does: the file, the field, the problem', () => {
    expect(
      configProblems(new ConfigError('fleetwatch.yaml', ['worker.concurrency: expected a whole number'])),
    ).toEqual(['fleetwatch.yaml: worker.concurrency: expected a whole number']);
    let problems: string[] = [];
    try {
      config('', 'nobody');
    } catch (error) {
      problems = configProblems(error);
    }
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^fleetwatch\.yaml: notifications\.route/);
  });
});
