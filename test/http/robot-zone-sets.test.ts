import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RobotApi, robotApi } from './robot-api.js';
import { documentLifecycle, refusesBadBodies } from './robot-documents.js';

/** The Zone Set Management group through /api/robots/{deviceId}/zone_sets/... and /loaded_zone_set. */

let api: RobotApi;
beforeEach(async () => {
  api = await robotApi();
});
afterEach(async () => {
  await api.close();
});

const ZONES = {
  zones: [
    { name: 'dock', enabled: true },
    { name: 'gate', enabled: true },
  ],
};

describe('Zone Set Management through /api/robots/{deviceId}', () => {
  it('creates, reads, updates, loads and deletes zone sets on the robot', async () => {
    await documentLifecycle(api, {
      collection: 'zone_sets',
      selected: 'loaded_zone_set',
      select: 'load',
      part: 'loadedZoneSet',
      ids: {
        create: 'robot.create_zone_set',
        select: 'robot.load_zone_set',
        delete: 'robot.delete_zone_set',
      },
      body: ZONES,
    });
  });

  it('enables and disables zones of the loaded set, passes the robot 422 on, and clears it', async () => {
    const base = `/api/robots/${api.robot}`;
    await api.request('POST', `${base}/zone_sets/yard`, { body: ZONES });
    await api.request('POST', `${base}/zone_sets/yard/load`);
    const patched = await api.request('PATCH', `${base}/loaded_zone_set/enabled`, {
      body: { zones: { gate: false } },
    });
    expect(patched.statusCode).toBe(200);
    const loaded = (await api.request('GET', `${base}/loaded_zone_set`)).json();
    expect(loaded.live.data.zones).toContainEqual(expect.objectContaining({ name: 'gate', enabled: false }));

    const unknown = await api.request('PATCH', `${base}/loaded_zone_set/enabled`, {
      body: { zones: { moat: true } },
    });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().error.details.upstreamMessage).toMatch(/unknown zone 'moat'/);

    api.audits();
    expect((await api.request('POST', `${base}/loaded_zone_set/clear`)).statusCode).toBe(200);
    expect(api.a.h.sim.control.getRobot(api.robot)!.loadedZoneSet).toBeNull();
    expect(api.audits()).toEqual([
      expect.objectContaining({ operation: 'robot.clear_loaded_zone_set', destructive: true, status: 200 }),
    ]);
    const none = await api.request('PATCH', `${base}/loaded_zone_set/enabled`, {
      body: { zones: { gate: true } },
    });
    expect(none.statusCode).toBe(409);
  });

  it('refuses bad bodies and a wrong token before sending', async () => {
    await refusesBadBodies(api, 'zone_sets');
  });
});
