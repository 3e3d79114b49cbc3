import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { SecretRegistry } from '../../src/log/secrets.js';
import { receiversSchema } from '../../src/notifiers/receivers/kinds.js';
import { compileRoutes } from '../../src/notifiers/routing/router.js';
import { fleetEvent, vpnBack, vpnLost } from '../notifiers/routing/helpers.js';

const env = {
  FLEET_CLIENT_ID: 'example-client',
  FLEET_CLIENT_SECRET: 'example-secret',
  SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX',
  SLACK_CHANGES_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B001/YYYYYYYYYYYYYYYY',
  TICKETING_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

describe('shipped config files', () => {
  it.each([
    'examples/fleetwatch.yaml',
    'examples/notifications.yaml',
    'examples/simulator.yaml',
    'deploy/fleetwatch.compose.yaml',
  ])('%s is valid', (file) => {
    expect(() => loadConfig(file, env, new SecretRegistry())).not.toThrow();
  });
});

describe('the commented receivers of examples/fleetwatch.yaml', () => {
  // They stay comments so the file loads without their secrets; uncommented, each must be valid.
  const lines = readFileSync('examples/fleetwatch.yaml', 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith('receivers:'));
  const commented: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    if (line.startsWith('#  ')) commented.push(line.slice(1));
  }
  const secrets: Record<string, string> = {
    '${SMTP_PASSWORD}': 'example-password',
    '${PAGERDUTY_ROUTING_KEY}': 'R0123456789abcdef0123456789abcde',
  };
  const text = commented.join('\n').replace(/\$\{[A-Z_]+\}/g, (name) => secrets[name] ?? name);
  const receivers = parse(text) as unknown[];

  it('holds an example of every kind that needs a secret', () => {
    expect(start).toBeGreaterThan(0);
    expect(receivers.map((receiver) => (receiver as { kind: string }).kind)).toEqual(
      expect.arrayContaining(['email', 'pagerduty']),
    );
  });

  it('is a valid list of receivers once uncommented', () => {
    const result = receiversSchema.safeParse(receivers);
    expect(result.success ? [] : result.error.issues).toEqual([]);
  });
});

describe('examples/fleetwatch.yaml routes', () => {
  const config = loadConfig('examples/fleetwatch.yaml', env, new SecretRegistry());
  const router = compileRoutes(config.notifications.route);
  const receiversOf = (event: Parameters<typeof router.route>[0]) =>
    router.route(event).map((match) => match.receiver);

  it('sends warnings, criticals and their resolutions to the alerts channel, info-level changes to the quieter one', () => {
    expect(receiversOf(vpnLost('veh-1'))).toEqual(['fleet-alerts']);
    expect(receiversOf(vpnBack('veh-1'))).toEqual(['fleet-alerts']);
    expect(receiversOf(fleetEvent('robot.health.down', 'robot/rb-1', { severity: 'critical' }))).toEqual([
      'fleet-alerts',
    ]);
    expect(receiversOf(fleetEvent('vehicle.power.changed', 'vehicle/veh-1', { severity: 'info' }))).toEqual([
      'fleet-changes',
    ]);
    expect(receiversOf(fleetEvent('vehicle.discovered', 'vehicle/veh-1', { severity: 'info' }))).toEqual([
      'fleet-changes',
    ]);
  });
});
