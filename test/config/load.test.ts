import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, maskConfig, parseConfig } from '../../src/config/index.js';
import { registerConfigSecrets } from '../../src/config/mask.js';
import { parseDuration } from '../../src/lib/duration.js';
import { SecretRegistry } from '../../src/log/secrets.js';
import { NOTIFIER_FACTORIES } from '../../src/notifiers/receivers/kinds.js';
import { configProblems } from '../support/config-problems.js';

/** Every kind the `receivers:` schema knows, as its problem lists them. */
const KNOWN_KINDS = NOTIFIER_FACTORIES.map((factory) => `"${factory.kind}"`).join(', ');

const VALID = `
upstream:
  base_url: https://fleet.example.com/
  robot_base_url: https://robots.example.com
  auth_url: https://auth.example.com
  client_id: fleetwatch
  client_secret: \${FLEET_SECRET}
`;

const problemsOf = (text: string, env: NodeJS.ProcessEnv = { FLEET_SECRET: 's3cr3t-value' }): string[] =>
  configProblems(() => parseConfig(text, 'test.yaml', env));

describe('parseConfig', () => {
  it('fills defaults, trims trailing slashes and interpolates secrets from the environment', () => {
    const config = parseConfig(VALID, 'test.yaml', { FLEET_SECRET: 's3cr3t-value' });
    expect(config.upstream.base_url).toBe('https://fleet.example.com');
    expect(config.upstream.client_secret).toBe('s3cr3t-value');
    expect(config.upstream.http.request_timeout).toBe(10_000);
    expect(config.upstream.token.refresh_before).toBe(60_000);
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'fw', shards: 1 });
  });

  it('accepts durations as text and uses ${VAR:-fallback} when the variable is unset', () => {
    const config = parseConfig(
      `${VALID}  http:\n    request_timeout: 2.5s\n    retry_base_delay: \${BASE:-150ms}\n`,
      'test.yaml',
      { FLEET_SECRET: 'abcdefgh' },
    );
    expect(config.upstream.http.request_timeout).toBe(2_500);
    expect(config.upstream.http.retry_base_delay).toBe(150);
  });

  it('keeps $${ as a literal', () => {
    const config = parseConfig(
      VALID.replace('client_id: fleetwatch', () => 'client_id: a$${b}'),
      't',
      {
        FLEET_SECRET: 'abcdefgh',
      },
    );
    expect(config.upstream.client_id).toBe('a${b}');
  });

  it('reads console.url as an absolute http(s) URL without a trailing slash; absent by default', () => {
    expect(parseConfig(VALID, 't', { FLEET_SECRET: 'abcdefgh' }).console).toEqual({});
    const config = parseConfig(`${VALID}console:\n  url: https://fleetwatch.example.com/ops/\n`, 't', {
      FLEET_SECRET: 'abcdefgh',
    });
    expect(config.console.url).toBe('https://fleetwatch.example.com/ops');
    for (const url of [
      'fleetwatch.example.com',
      'ftp://fleetwatch.example.com',
      'https://a.example/#/x',
      '',
    ]) {
      expect(problemsOf(`${VALID}console:\n  url: '${url}'\n`)).toEqual([
        expect.stringMatching(
          /^console\.url: must be an absolute http\(s\) URL such as https:\/\/fleetwatch\.example\.com/,
        ),
      ]);
    }
    expect(problemsOf(`${VALID}console:\n  link: x\n`)[0]).toContain('console');
  });

  it('refuses a base_url or robot_base_url that already holds the path fleetwatch adds', () => {
    const withUrls = (base: string, robots: string) =>
      VALID.replace('https://fleet.example.com/', base).replace('https://robots.example.com', robots);
    expect(problemsOf(withUrls('http://host/v1', 'http://host/api'))).toEqual([
      'upstream.base_url: expected the service root, without /v1 (fleetwatch adds /v1/vehicles…), such as http://host; got http://host/v1',
      'upstream.robot_base_url: expected the service root, without /api (fleetwatch adds /api/robots and /api/platform/{deviceId}/v2/…), such as http://host; got http://host/api',
    ]);
    expect(problemsOf(withUrls('http://host/fleet/v1/', 'http://host/v2'))).toEqual([
      'upstream.base_url: expected the service root, without /v1 (fleetwatch adds /v1/vehicles…), such as http://host/fleet; got http://host/fleet/v1',
      'upstream.robot_base_url: expected the service root, without /v2 (fleetwatch adds /api/robots and /api/platform/{deviceId}/v2/…), such as http://host; got http://host/v2',
    ]);
    // A root under a path of its own is a root.
    const rooted = parseConfig(withUrls('http://host/fleet', 'http://host/robots'), 't', {
      FLEET_SECRET: 'abcdefgh',
    });
    expect(rooted.upstream.robot_base_url).toBe('http://host/robots');
  });

  it('names the field and the reason for each problem', () => {
    const text = VALID.replace('https://fleet.example.com/', 'ftp://fleet').replace(
      '  client_id: fleetwatch\n',
      '  colour: blue\n',
    );
    expect(problemsOf(`${text}redis:\n  url: localhost\n`)).toEqual([
      'upstream.base_url: must be an http(s) URL',
      'upstream.client_id: is required (the client id issued by the fleet operator)',
      'upstream: unknown field "colour" (expected one of base_url, robot_base_url, auth_url, client_id, client_secret, token, http)',
      'redis.url: must be a redis:// or rediss:// URL',
    ]);
  });

  it('takes a Redis Cluster in place of one server, and refuses both or a database number', () => {
    const cluster = `${VALID}redis:\n  cluster:\n    nodes: [redis://:pw-of-the-cluster@10.0.0.1:7000, redis://10.0.0.2:7000]\n`;
    const config = parseConfig(cluster, 'test.yaml', { FLEET_SECRET: 's3cr3t-value' });
    expect(config.redis.cluster?.nodes).toEqual([
      'redis://:pw-of-the-cluster@10.0.0.1:7000',
      'redis://10.0.0.2:7000',
    ]);
    expect(JSON.stringify(maskConfig(config))).not.toContain('pw-of-the-cluster');
    const registry = new SecretRegistry();
    registerConfigSecrets(config, registry);
    expect(registry.scrub('auth pw-of-the-cluster')).toBe('auth [REDACTED]');
    expect(
      problemsOf(
        `${VALID}redis:\n  url: redis://10.0.0.1:6379\n  cluster:\n    nodes: [redis://10.0.0.1:7000]\n`,
      ),
    ).toEqual([
      'redis.cluster: set either redis.url (one server) or redis.cluster (a Redis Cluster), not both',
    ]);
    expect(problemsOf(`${VALID}redis:\n  cluster:\n    nodes: [redis://10.0.0.1:7000/2]\n`)).toEqual([
      'redis.cluster.nodes[0]: a Redis Cluster has only database 0: give the node URL without a database number',
    ]);
    expect(problemsOf(`${VALID}redis:\n  cluster:\n    nodes: []\n`)).toEqual([
      'redis.cluster.nodes: expected at least one node URL, like redis://10.0.0.1:6379',
    ]);
  });

  it('takes redis.shards from 1 to 256 and says what else it expected', () => {
    expect(
      parseConfig(`${VALID}redis:\n  shards: 12\n`, 'test.yaml', { FLEET_SECRET: 's' }).redis.shards,
    ).toBe(12);
    expect(problemsOf(`${VALID}redis:\n  shards: 0\n`)).toEqual([
      'redis.shards: expected a whole number of shards from 1 to 256',
    ]);
    expect(problemsOf(`${VALID}redis:\n  shards: 1.5\n`)).toEqual([
      'redis.shards: expected a whole number of shards from 1 to 256',
    ]);
    expect(problemsOf(`${VALID}redis:\n  shards: 300\n`)).toEqual([
      'redis.shards: expected at most 256 shards (each still spans 64 of the 16,384 slots)',
    ]);
  });

  it('says which environment variable is missing, for which field', () => {
    expect(problemsOf(VALID, {})).toEqual([
      'upstream.client_secret: environment variable FLEET_SECRET is not set',
    ]);
  });

  it('rejects malformed durations, numbers and enums', () => {
    const text = `${VALID}  http:\n    request_timeout: soon\n    max_connections: 0\nlog:\n  level: loud\n`;
    expect(problemsOf(text)).toEqual([
      'upstream.http.request_timeout: expected a duration between 100ms and 5m, like 30s; got soon',
      'upstream.http.max_connections: expected a whole number between 1 and 1024; got 0',
      'log.level: expected one of "trace", "debug", "info", "warn", "error", "fatal", "silent"; got loud',
    ]);
  });

  it('bounds how work is spread and taken over', () => {
    const text = `${VALID}worker:\n  spread: 1.5\n  takeover_after: 500ms\n`;
    expect(problemsOf(text)).toEqual([
      'worker.spread: expected a number between 0 and 0.9; got 1.5',
      'worker.takeover_after: expected a duration between 2s and 1h, like 30s; got 500ms',
    ]);
    const config = parseConfig(`${VALID}worker:\n  spread: 0\n  takeover_after: 5s\n`, 'test.yaml', {
      FLEET_SECRET: 's3cr3t-value',
    });
    expect(config.worker).toMatchObject({ spread: 0, takeover_after: 5_000 });
  });

  it('reports YAML syntax errors with their position', () => {
    const [problem] = problemsOf('upstream:\n  base_url: [unclosed\n');
    expect(problem).toMatch(/^line \d+, column \d+: /);
  });

  it('rejects a file that is not a mapping', () => {
    expect(problemsOf('- a\n- b\n')).toEqual([
      'the file must be a YAML mapping (key: value pairs) at the top level',
    ]);
  });
});

describe('loadConfig', () => {
  it('reads the file named by --config, else FLEETWATCH_CONFIG, and registers its secrets', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-config-'));
    const file = join(dir, 'fleetwatch.yaml');
    writeFileSync(file, `${VALID}redis:\n  url: redis://:hunter2-pass@127.0.0.1:6379\n`);
    const registry = new SecretRegistry();
    const config = loadConfig(
      undefined,
      { FLEETWATCH_CONFIG: file, FLEET_SECRET: 'client-secret-1' },
      registry,
    );
    expect(config.upstream.client_id).toBe('fleetwatch');
    expect(registry.scrub('a client-secret-1 b hunter2-pass c')).toBe('a [REDACTED] b [REDACTED] c');
    const masked = JSON.stringify(maskConfig(config));
    expect(masked).not.toContain('client-secret-1');
    expect(masked).not.toContain('hunter2-pass');
    expect(maskConfig(config).redis.url).toBe('redis://:[REDACTED]@127.0.0.1:6379');
  });

  it('explains a missing file', () => {
    expect(() => loadConfig('/nonexistent/fleetwatch.yaml', {}, new SecretRegistry())).toThrow(
      /cannot read the config file \(no such file\)/,
    );
  });

  it('says so when --config names a directory', () => {
    const directory = mkdtempSync(join(tmpdir(), 'fw-config-dir-'));
    expect(() => loadConfig(directory, {}, new SecretRegistry())).toThrow(
      /cannot read the config file \(it is a directory, not a file\)/,
    );
  });
});

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1.5h', 5_400_000],
    ['2d', 172_800_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', 'm', '5 minutes', '-1s'])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('receivers', () => {
  const base = `${VALID}receivers:\n`;
  const env = {
    FLEET_SECRET: 's3cr3t-value',
    SLACK_URL: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX',
  };

  it('validates each receiver by the schema of its kind and masks its secrets', () => {
    const config = parseConfig(
      `${base}  - { name: ops, kind: slack, url: "\${SLACK_URL}" }\n  - { name: tickets, kind: webhook, url: https://example.com/hook, secrets: [whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw] }\n`,
      'test.yaml',
      env,
    );
    expect(config.receivers.map((receiver) => receiver.kind)).toEqual(['slack', 'webhook']);
    const masked = JSON.stringify(maskConfig(config));
    expect(masked).not.toContain('XXXXXXXXXXXX');
    expect(masked).not.toContain('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  });

  it("registers each receiver's secrets, as its kind names them", () => {
    const config = parseConfig(
      `${base}  - { name: ops, kind: slack, url: "\${SLACK_URL}" }\n  - { name: tickets, kind: webhook, url: "https://example.com/hook?key=k3y-value", secrets: [whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw], headers: { x-api-key: h3ader-value } }\n  - { name: terminal, kind: console }\n`,
      'test.yaml',
      env,
    );
    const registry = new SecretRegistry();
    registerConfigSecrets(config, registry);
    const text = registry.scrub(
      `${env.SLACK_URL} XXXXXXXXXXXX whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw k3y-value h3ader-value`,
    );
    expect(text).toBe(Array(6).fill('[REDACTED]').join(' '));
  });

  it('names the receiver and field of every problem', () => {
    expect(
      problemsOf(
        `${base}  - { name: a, kind: pager }\n  - { name: b, kind: webhook, url: ftp://x, secrets: [nope] }\n`,
        env,
      ),
    ).toEqual([
      `receivers[0].kind: expected one of ${KNOWN_KINDS}; got pager`,
      'receivers[1].url: must be an http(s) URL',
      'receivers[1].secrets[0]: must be a whsec_ secret with 24 to 64 bytes of base64',
    ]);
  });

  it('refuses two receivers with one name', () => {
    expect(
      problemsOf(
        `${base}  - { name: ops, kind: slack, url: "\${SLACK_URL}" }\n  - { name: ops, kind: slack, url: "\${SLACK_URL}" }\n`,
        env,
      ),
    ).toEqual(['receivers[1].name: "ops" is used twice']);
  });
});
