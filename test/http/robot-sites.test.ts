import { afterEach, beforeEach, describe, it } from 'vitest';
import { type RobotApi, robotApi } from './robot-api.js';
import { documentLifecycle, refusesBadBodies } from './robot-documents.js';

/** The Site Management group through /api/robots/{deviceId}/sites/... */

let api: RobotApi;
beforeEach(async () => {
  api = await robotApi();
});
afterEach(async () => {
  await api.close();
});

describe('Site Management through /api/robots/{deviceId}', () => {
  it('creates, reads, updates, activates and deletes sites on the robot', async () => {
    await documentLifecycle(api, {
      collection: 'sites',
      selected: 'active_site',
      select: 'activate',
      part: 'activeSite',
      ids: { create: 'robot.create_site', select: 'robot.activate_site', delete: 'robot.delete_site' },
      body: { origin: { latitude: 52.1, longitude: 4.3 } },
    });
  });

  it('refuses bad bodies and a wrong token before sending', async () => {
    await refusesBadBodies(api, 'sites');
  });
});
