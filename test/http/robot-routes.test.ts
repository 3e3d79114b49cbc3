import { afterEach, beforeEach, describe, it } from 'vitest';
import { type RobotApi, robotApi } from './robot-api.js';
import { documentLifecycle, refusesBadBodies } from './robot-documents.js';

/** The Route Management group through /api/robots/{deviceId}/routes/... */

let api: RobotApi;
beforeEach(async () => {
  api = await robotApi();
});
afterEach(async () => {
  await api.close();
});

describe('Route Management through /api/robots/{deviceId}', () => {
  it('creates, reads, updates, loads and deletes routes on the robot', async () => {
    await documentLifecycle(api, {
      collection: 'routes',
      selected: 'loaded_route',
      select: 'load',
      part: 'loadedRoute',
      ids: { create: 'robot.create_route', select: 'robot.load_route', delete: 'robot.delete_route' },
      body: {
        waypoints: [
          { x: 0, y: 0 },
          { x: 5, y: 2 },
        ],
      },
    });
  });

  it('refuses bad bodies and a wrong token before sending', async () => {
    await refusesBadBodies(api, 'routes');
  });
});
