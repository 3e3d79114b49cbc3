import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RobotApi, robotApi } from './robot-api.js';

/** The Realtime group: a room and a track made and removed through the API. */

let api: RobotApi;
beforeEach(async () => {
  api = await robotApi();
});
afterEach(async () => {
  await api.close();
});

const room = () => api.a.h.sim.control.getRobot(api.robot)!.room;
const path = (rest: string) => `/api/robots/${api.robot}/realtime/${rest}`;

describe('Realtime through /api/robots/{deviceId}', () => {
  it('creates a room and a track, reads them, and deletes both', async () => {
    expect((await api.request('GET', path('config'))).json().live.data.url).toMatch(/^wss:/);
    const created = await api.request('POST', path('room'), { body: { name: 'ops' } });
    expect(created.statusCode).toBe(200);
    expect(room()?.name).toBe('ops');
    const track = (
      await api.request('POST', path('room/track'), { body: { name: 'cam', kind: 'video' } })
    ).json();
    expect(room()?.tracks).toEqual([track.live.data.track_id]);
    expect((await api.request('GET', path('room'))).json().live.data.tracks).toHaveLength(1);

    const token = (await api.request('POST', path('token'))).json();
    expect(token.live.data.room).toBe('ops');

    const removed = await api.request('DELETE', path('room/track'), { body: { name: 'cam' } });
    expect(removed.statusCode).toBe(200);
    expect(room()?.tracks).toEqual([]);
    expect((await api.request('DELETE', path('room'))).statusCode).toBe(200);
    expect(room()).toBeNull();
    expect(api.audits().map((line) => [line['operation'], line['destructive']])).toEqual([
      ['robot.create_realtime_room', false],
      ['robot.create_realtime_track', false],
      ['robot.create_realtime_token', false],
      ['robot.delete_realtime_track', true],
      ['robot.delete_realtime_room', true],
    ]);
  });

  it("answers the robot's 404 when there is no room to delete, and 409 for a second room", async () => {
    const none = await api.request('DELETE', path('room'));
    expect(none.statusCode).toBe(404);
    expect(none.json().error.code).toBe('not_found');
    await api.request('POST', path('room'));
    const again = await api.request('POST', path('room'));
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('upstream_conflict');
  });
});
