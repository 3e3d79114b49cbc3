import { describe, expect, it } from 'vitest';
import { slackNotifierFactory } from '../../../../src/notifiers/receivers/slack/index.js';

const URL = 'https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX';

function problems(input: unknown): string[] {
  const result = slackNotifierFactory.configSchema.safeParse(input);
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('slack receiver config', () => {
  it('accepts an incoming-webhook URL and defaults the time-out to 10s', () => {
    expect(slackNotifierFactory.configSchema.parse({ kind: 'slack', name: 'ops', url: URL })).toEqual({
      kind: 'slack',
      name: 'ops',
      compatible: 'slack',
      url: URL,
      timeout: 10_000,
      max_hold: 300_000,
    });
  });

  it('reads the optional message defaults and a duration', () => {
    const config = slackNotifierFactory.configSchema.parse({
      kind: 'slack',
      name: 'ops',
      url: URL,
      username: 'fleetwatch',
      icon_emoji: ':robot_face:',
      icon_url: 'https://example.com/icon.png',
      channel: '#fleet-alerts',
      timeout: '5s',
    });
    expect(config).toMatchObject({ channel: '#fleet-alerts', icon_emoji: ':robot_face:', timeout: 5_000 });
  });

  it('allows plain http only on loopback, for stand-ins', () => {
    expect(problems({ kind: 'slack', name: 'ops', url: 'http://127.0.0.1:4321/services/T/B/x' })).toEqual([]);
    expect(
      problems({ kind: 'slack', name: 'ops', url: 'http://hooks.slack.com/services/T0/B0/x' }),
    ).toHaveLength(1);
  });

  it.each([
    'https://example.com/services/T0123ABCD/B0456EFGH/aBcDeFgH',
    'https://hooks.slack.com/workflows/T0123ABCD/A0/123/abc',
    'https://hooks.slack.com/services/T0123ABCD',
    'https://user:pw@hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgH',
    'not a url',
    '${MISSING_VAR}',
  ])('rejects %s without repeating it', (url) => {
    const found = problems({ kind: 'slack', name: 'ops', url });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^url: must be a Slack incoming-webhook URL/);
    expect(found[0]).not.toContain(url);
  });

  it('rejects unknown fields and bad values', () => {
    expect(problems({ kind: 'slack', name: 'ops', url: URL, colour: 'red' })).toHaveLength(1);
    expect(problems({ kind: 'slack', name: 'ops', url: URL, timeout: 'soon' })[0]).toMatch(/^timeout:/);
    expect(problems({ kind: 'slack', name: 'ops', url: URL, timeout: '10m' })[0]).toMatch(/^timeout:/);
    expect(problems({ kind: 'slack', name: 'ops', url: URL, icon_emoji: 'robot' })[0]).toMatch(
      /^icon_emoji:/,
    );
    expect(problems({ kind: 'webhook', name: 'ops', url: URL })[0]).toMatch(/^kind:/);
  });

  it('masks the URL', () => {
    const config = slackNotifierFactory.configSchema.parse({ kind: 'slack', name: 'ops', url: URL });
    const masked = slackNotifierFactory.mask(config);
    expect(masked.url).toBe('[REDACTED]');
    expect(JSON.stringify(masked)).not.toContain('aBcDeFgH');
    expect(config.url).toBe(URL);
  });

  it('names the URL and its secret last segment as the secrets', () => {
    const config = slackNotifierFactory.configSchema.parse({ kind: 'slack', name: 'ops', url: URL });
    expect(slackNotifierFactory.secrets(config)).toEqual([URL, 'aBcDeFgHiJkLmNoPqRsTuVwX']);
  });
});
