import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { SecretRegistry } from '../../src/log/secrets.js';
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
