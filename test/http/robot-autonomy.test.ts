import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RobotApi, robotApi } from './robot-api.js';

/** The Vehicle Autonomy group: live reads with their snapshots, writes that change the robot, refusals before sending. */

let api: RobotApi;
beforeEach(async () => {
  api = await robotApi();
});
afterEach(async () => {
  await api.close();
});

const queueLength = () => api.a.h.sim.control.getRobot(api.robot)!.commandQueue;

describe('Vehicle Autonomy through /api/robots/{deviceId}', () => {
  it('passes the whole platform feedback envelope on, with the feedback snapshot', async () => {
    await api.a.h.tick('robots', 'robot_feedback', 'robot_command_queue');
    const feedback = (await api.request('GET', `/api/robots/${api.robot}/platform-feedback`)).json();
    expect(feedback.live.status).toBe('success');
    expect(feedback.live.data.platform_feedback.vehicle_feedback.state).toBe(
      api.a.h.sim.control.getRobot(api.robot)!.feedback.vehicleState,
    );
    expect(feedback.snapshot).toMatchObject({ facet: 'feedback', state: expect.any(String) });

    const queue = (await api.request('GET', `/api/robots/${api.robot}/command-queue`)).json();
    expect(queue.live.data).toHaveLength(queueLength());
    expect(queue.snapshot).toMatchObject({ facet: 'command_queue', commandQueue: { length: queueLength() } });

    const options = (await api.request('GET', `/api/robots/${api.robot}/navigation-path-options`)).json();
    expect(options.snapshot).toBeNull();
    expect(Array.isArray(options.live.data)).toBe(true);
  });

  it('sends waypoints once, audits them, and the robot queues them', async () => {
    const before = queueLength();
    const response = await api.request('POST', `/api/robots/${api.robot}/gps-waypoints`, {
      body: { waypoints: [{ latitude: 52.1, longitude: 4.3 }] },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      deviceId: api.robot,
      operation: 'robot.send_gps_waypoints',
      live: { data: { received: true } },
    });
    expect(queueLength()).toBe(before + 1);
    expect(api.sent()).toBe(1);
    expect(api.audits()).toEqual([
      expect.objectContaining({
        audit: true,
        actor: 'api_token',
        operation: 'robot.send_gps_waypoints',
        deviceId: api.robot,
        destructive: false,
        status: 200,
      }),
    ]);
  });

  it("passes the robot's 422 on with its words, and audits the refusal", async () => {
    const response = await api.request('POST', `/api/robots/${api.robot}/gps-waypoints`, {
      body: { waypoints: [{ latitude: 123, longitude: 4.3 }] },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({
      code: 'upstream_unprocessable',
      details: { upstreamStatus: 422, upstreamMessage: expect.stringMatching(/latitude/) },
    });
    expect(api.audits()).toEqual([
      expect.objectContaining({ operation: 'robot.send_gps_waypoints', status: 422, upstreamStatus: 422 }),
    ]);
  });

  it('STOP is a destructive motion command: it empties the queue', async () => {
    await api.request('POST', `/api/robots/${api.robot}/relative-waypoints`, {
      body: { waypoints: [{ x: 1, y: 2 }] },
    });
    expect(queueLength()).toBeGreaterThan(0);
    api.audits();
    const stop = await api.request('POST', `/api/robots/${api.robot}/motion-command`, {
      body: { motion_command: 0, mode: 1 },
    });
    expect(stop.statusCode).toBe(200);
    expect(queueLength()).toBe(0);
    expect(api.audits()).toEqual([
      expect.objectContaining({ operation: 'robot.send_motion_command', destructive: true, status: 200 }),
    ]);
  });

  it("checks the body against the row's schema before anything is sent", async () => {
    const bad = await api.request('POST', `/api/robots/${api.robot}/motion-command`, {
      body: { motion_command: 7 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/^body\.motion_command: /);
    const missing = await api.request('POST', `/api/robots/${api.robot}/motion-command`);
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.message).toBe('body: is required (a JSON object)');
    const list = await api.request('POST', `/api/robots/${api.robot}/reference-targets`, { body: [1, 2] });
    expect(list.statusCode).toBe(400);
    expect(list.json().error.message).toMatch(/^body: must be a JSON object/);
    expect(api.sent()).toBe(0);
    expect(api.audits()).toEqual([]);
  });

  it('writes need the token: without it nothing is sent', async () => {
    const response = await api.request('POST', `/api/robots/${api.robot}/motion-command`, {
      body: { motion_command: 1 },
      token: null,
    });
    expect(response.statusCode).toBe(401);
    expect(api.sent()).toBe(0);
  });
});
