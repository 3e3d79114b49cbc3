import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { SecretRegistry } from '../../src/log/secrets.js';

const env = {
  FLEET_CLIENT_ID: 'example-client',
  FLEET_CLIENT_SECRET: 'example-secret',
  SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX',
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
