import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, maskConfig, parseConfig } from '../../src/config/index.js';
import { SecretRegistry } from '../../src/log/secrets.js';
import { configProblems } from '../support/config-problems.js';

const BASE = `
upstream:
  base_url: https://fleet.example.com
  robot_base_url: https://robots.example.com
  auth_url: https://auth.example.com
  client_id: fleetwatch
  client_secret: s3cr3t-value
`;

const TOKEN = 'b6f0c1d2e3a4958677aa01bc23de45f6';

const problemsOf = (text: string, env: NodeJS.ProcessEnv = {}): string[] =>
  configProblems(() => parseConfig(text, 'test.yaml', env));

describe('the http config section', () => {
  it('defaults to loopback port 9464, on, without a token', () => {
    expect(parseConfig(BASE, 'test.yaml', {}).http).toEqual({
      enabled: true,
      host: '127.0.0.1',
      port: 9464,
      api_token: undefined,
      tokens: [],
      session_ttl: 12 * 3_600_000,
      cors: { origins: [] },
    });
  });

  it('takes the token from the environment; an empty one is no token', () => {
    const text = `${BASE}http:\n  host: 0.0.0.0\n  api_token: \${FLEETWATCH_API_TOKEN:-}\n`;
    expect(parseConfig(text, 'test.yaml', { FLEETWATCH_API_TOKEN: TOKEN }).http).toMatchObject({
      host: '0.0.0.0',
      api_token: TOKEN,
    });
    expect(parseConfig(text, 'test.yaml', {}).http.api_token).toBeUndefined();
  });

  it('names the field of a bad value', () => {
    expect(problemsOf(`${BASE}http:\n  api_token: short\n`)).toEqual([
      'http.api_token: must be at least 16 characters (generate one with: openssl rand -hex 32)',
    ]);
    expect(problemsOf(`${BASE}http:\n  port: 70000\n`)[0]).toMatch(/^http\.port: /);
    expect(problemsOf(`${BASE}http:\n  prot: 80\n`)[0]).toMatch(/^http: unknown field "prot"/);
  });

  it('masks the token in the printed config and registers it for scrubbing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-http-config-'));
    try {
      const file = join(dir, 'fleetwatch.yaml');
      writeFileSync(file, `${BASE}http:\n  api_token: \${FLEETWATCH_API_TOKEN}\n`);
      const registry = new SecretRegistry();
      const config = loadConfig(file, { FLEETWATCH_API_TOKEN: TOKEN }, registry);
      expect(config.http.api_token).toBe(TOKEN);
      expect(JSON.stringify(maskConfig(config))).not.toContain(TOKEN);
      expect(maskConfig(config).http.api_token).toBe('[REDACTED]');
      expect(registry.scrub(`Authorization: Bearer ${TOKEN}`)).toBe('Authorization: Bearer [REDACTED]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes named tokens with roles, a session lifetime and CORS origins', () => {
    const text = `${BASE}http:
  tokens:
    - { name: grafana, token: '\${GRAFANA_TOKEN}', role: read }
    - { name: ops-console, token: ${TOKEN}x, role: operate }
  session_ttl: 30m
  cors: { origins: [https://ops.example.com, 'http://localhost:3000'] }
`;
    const http = parseConfig(text, 'test.yaml', { GRAFANA_TOKEN: `${TOKEN}g` }).http;
    expect(http.tokens).toEqual([
      { name: 'grafana', token: `${TOKEN}g`, role: 'read' },
      { name: 'ops-console', token: `${TOKEN}x`, role: 'operate' },
    ]);
    expect(http.session_ttl).toBe(1_800_000);
    expect(http.cors.origins).toEqual(['https://ops.example.com', 'http://localhost:3000']);
  });

  it('names the entry of a bad token, never showing the token', () => {
    const entry = (name: string, token: string, role = 'read') =>
      `    - { name: ${name}, token: '${token}', role: ${role} }\n`;
    const problems = problemsOf(
      `${BASE}http:\n  api_token: ${TOKEN}\n  tokens:\n` +
        entry('grafana', `${TOKEN}a`) +
        entry('grafana', `${TOKEN}b`) +
        entry('copy', TOKEN, 'admin') +
        entry('short', 'abc') +
        entry('spaced', 'with a space inside it', 'operate') +
        entry('api_token', `${TOKEN}c`) +
        entry('bad name!', `${TOKEN}d`) +
        entry('roleless', `${TOKEN}e`, 'root'),
    );
    expect(problems).toEqual([
      'http.tokens[3].token: must be at least 16 characters (generate one with: openssl rand -hex 32)',
      'http.tokens[4].token: must be printable ASCII without spaces (generate one with: openssl rand -hex 32)',
      'http.tokens[5].name: "api_token" is the name of http.api_token; choose another',
      'http.tokens[6].name: must be 1 to 64 letters, digits, ".", "_", "@" or "-", such as grafana or ops-console',
      'http.tokens[7].role: expected one of "read", "operate", "admin"',
    ]);
    // Names and tokens unique (checked once every entry is valid on its own).
    const duplicates = problemsOf(
      `${BASE}http:\n  api_token: ${TOKEN}\n  tokens:\n` +
        entry('grafana', `${TOKEN}a`) +
        entry('grafana', `${TOKEN}b`) +
        entry('copy', TOKEN, 'admin') +
        entry('copy2', `${TOKEN}a`),
    );
    expect(duplicates).toEqual([
      'http.tokens[1].name: "grafana" is already the name of http.tokens[0]; names must be unique',
      'http.tokens[2].token: is the same token as http.api_token; every token must be different',
      'http.tokens[3].token: is the same token as http.tokens[0] (grafana); every token must be different',
    ]);
    for (const line of [...problems, ...duplicates]) expect(line).not.toContain(TOKEN);
  });

  it('bounds the number of tokens and origins and the session lifetime', () => {
    const many = Array.from(
      { length: 101 },
      (_, i) => `    - { name: t${i}, token: ${TOKEN}-${i}, role: read }`,
    );
    expect(problemsOf(`${BASE}http:\n  tokens:\n${many.join('\n')}\n`)).toEqual([
      'http.tokens: expected at most 100 tokens',
    ]);
    const origins = Array.from({ length: 51 }, (_, i) => `https://o${i}.example.com`);
    expect(problemsOf(`${BASE}http:\n  cors: { origins: [${origins.join(', ')}] }\n`)).toEqual([
      'http.cors.origins: expected at most 50 origins',
    ]);
    expect(problemsOf(`${BASE}http:\n  session_ttl: 1m\n`)).toEqual([
      'http.session_ttl: expected a duration between 5m and 7d, like 5m; got 1m',
    ]);
    expect(problemsOf(`${BASE}http:\n  session_ttl: 8d\n`)[0]).toMatch(
      /^http\.session_ttl: expected a duration between 5m and 7d/,
    );
    for (const origin of [
      'https://ops.example.com/',
      'https://ops.example.com/app',
      'ops.example.com',
      '*',
      'HTTPS://OPS.example.com',
    ]) {
      expect(problemsOf(`${BASE}http:\n  cors: { origins: ['${origin}'] }\n`), origin).toEqual([
        'http.cors.origins[0]: must be an origin as a browser sends it: scheme, host and port only, such as https://ops.example.com (no path, no trailing slash, lower case)',
      ]);
    }
  });

  it('masks every named token and registers it for scrubbing', () => {
    const registry = new SecretRegistry();
    const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-http-config-'));
    try {
      const file = join(dir, 'fleetwatch.yaml');
      writeFileSync(
        file,
        `${BASE}http:\n  tokens: [{ name: grafana, token: '\${GRAFANA_TOKEN}', role: read }]\n`,
      );
      const config = loadConfig(file, { GRAFANA_TOKEN: `${TOKEN}g` }, registry);
      expect(maskConfig(config).http.tokens).toEqual([
        { name: 'grafana', token: '[REDACTED]', role: 'read' },
      ]);
      expect(registry.scrub(`Bearer ${TOKEN}g`)).toBe('Bearer [REDACTED]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
