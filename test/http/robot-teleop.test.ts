import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RobotApi, robotApi } from './robot-api.js';

/** The Teleop Control group: the lease taken, passed on and released through the API; the robot's 403 and 409. */

let api: RobotApi;
beforeEach(async () => {
  api = await robotApi();
  api.a.h.sim.control.updateRobot(api.robot, { lease: null });
});
afterEach(async () => {
  await api.close();
});

const holder = () => api.a.h.sim.control.getRobot(api.robot)!.lease.holderId;
const path = (rest: string) => `/api/robots/${api.robot}/teleop-control/${rest}`;

describe('Teleop Control through /api/robots/{deviceId}', () => {
  it('acquires, shows and transfers the lease; the status read carries the lease snapshot', async () => {
    expect((await api.request('POST', path('acquire'))).statusCode).toBe(200);
    expect(holder()).toBe('fleetwatch-demo');

    await api.a.h.tick('robots', 'robot_lease');
    const status = (await api.request('GET', path('status'))).json();
    expect(status.live.data.holder_id).toBe('fleetwatch-demo');
    expect(status.snapshot).toMatchObject({ facet: 'lease', lease: { holderId: 'fleetwatch-demo' } });

    const transfer = await api.request('POST', path('transfer'), { body: { to: 'alice' } });
    expect(transfer.statusCode).toBe(200);
    expect(holder()).toBe('alice');
    expect(api.audits().map((line) => [line['operation'], line['status']])).toEqual([
      ['robot.teleop_acquire', 200],
      ['robot.teleop_transfer', 200],
    ]);
  });

  it('refuses a transfer without `to` before sending it', async () => {
    await api.request('POST', path('acquire'));
    api.sent();
    const response = await api.request('POST', path('transfer'), { body: { to: '' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toMatch(/^body\.to: /);
    const none = await api.request('POST', path('transfer'));
    expect(none.statusCode).toBe(400);
    expect(api.sent()).toBe(0);
    expect(holder()).toBe('fleetwatch-demo');
  });

  it("passes the robot's 403 on when another user holds the lease, and its 409 when there is none", async () => {
    api.a.h.sim.control.updateRobot(api.robot, { lease: { holderId: 'bob' } });
    const held = await api.request('POST', path('acquire'));
    expect(held.statusCode).toBe(403);
    expect(held.json().error).toMatchObject({
      code: 'upstream_forbidden',
      details: { upstreamStatus: 403, upstreamMessage: expect.stringMatching(/lease held by another user/) },
    });
    expect(api.audits()).toEqual([
      expect.objectContaining({
        operation: 'robot.teleop_acquire',
        status: 403,
        error: 'upstream_forbidden',
      }),
    ]);

    api.a.h.sim.control.updateRobot(api.robot, { lease: null });
    const renew = await api.request('POST', path('renew'));
    expect(renew.statusCode).toBe(409);
    expect(renew.json().error).toMatchObject({
      code: 'upstream_conflict',
      details: { upstreamMessage: expect.stringMatching(/no lease to renew/) },
    });

    // The robot says it in its message and its details alike: the answer says it once.
    const transfer = await api.request('POST', path('transfer'), { body: { to: 'alice' } });
    expect(transfer.statusCode).toBe(409);
    const { message, details } = transfer.json().error;
    expect(details.upstreamMessage).toBe('no lease to transfer');
    expect(message.match(/no lease to transfer/g)).toHaveLength(1);
  });

  it('releases a lease another user holds with force=true, a destructive write', async () => {
    api.a.h.sim.control.updateRobot(api.robot, { lease: { holderId: 'bob' } });
    expect((await api.request('POST', path('release'))).statusCode).toBe(403);
    const bad = await api.request('POST', path('release'), { query: { force: 'maybe' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/^query\.force: must be true or false/);
    api.audits();
    const forced = await api.request('POST', path('release'), { query: { force: 'true' } });
    expect(forced.statusCode).toBe(200);
    expect(holder()).toBeNull();
    expect(api.audits()).toEqual([
      expect.objectContaining({ operation: 'robot.teleop_release', destructive: true, status: 200 }),
    ]);
  });

  it('refuses a body on a write that takes none', async () => {
    const response = await api.request('POST', path('release'), { body: { force: true } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toMatch(/takes no body/);
    expect(api.sent()).toBe(0);
  });
});
