import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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

  it('takes a site of many poses, larger than the API’s usual 64 KiB, up to 1 MiB', async () => {
    const poses = Array.from({ length: 3_000 }, (_, i) => ({ x: i * 0.5, y: i * 0.25, theta: 0.125 }));
    const body = { origin: { latitude: 52.1, longitude: 4.3 }, poses };
    expect(JSON.stringify(body).length).toBeGreaterThan(64 * 1024);
    const created = await api.request('POST', `/api/robots/${api.robot}/sites/big`, { body });
    expect(created.statusCode).toBe(200);
    const tooBig = { ...body, poses: Array.from({ length: 40_000 }, () => poses[0]) };
    const refused = await api.request('POST', `/api/robots/${api.robot}/sites/bigger`, { body: tooBig });
    expect(refused.statusCode).toBe(413);
  });

  it('refuses bad bodies and a wrong token before sending', async () => {
    await refusesBadBodies(api, 'sites');
  });
});
