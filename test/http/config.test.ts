import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, maskConfig, parseConfig } from '../../src/config/index.js';
import { SecretRegistry } from '../../src/log/secrets.js';

const BASE = `
upstream:
  base_url: https://fleet.example.com
  robot_base_url: https://robots.example.com
  auth_url: https://auth.example.com
  client_id: fleetwatch
  client_secret: s3cr3t-value
`;

const TOKEN = 'b6f0c1d2e3a4958677aa01bc23de45f6';

function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(text, 'test.yaml', env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

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
});
