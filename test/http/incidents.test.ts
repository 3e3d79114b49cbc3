import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncidentPage, IncidentView } from '../../src/incidents/view.js';
import { SilenceStore } from '../../src/notifiers/muting/silence-store.js';
import { eventually } from '../support/redis.js';
import { type AppHarness, appHarness, bearer, captureLogs, TOKEN } from './helpers.js';

/**
 * `/api/incidents`: the open incidents as the commit keeps them, each with whether it is muted
 * right now and who acknowledged it; acknowledging one (write token, audited).
 */

let a: AppHarness;
const logs = captureLogs();

beforeAll(async () => {
  a = await appHarness({
    token: TOKEN,
    logger: logs.logger,
    harness: { simulator: { vehicles: 3, robots: 0 }, prefix: `ti-${randomBytes(5).toString('hex')}` },
  });
  for (const vehicle of a.h.sim.control.state().vehicles) {
    a.h.sim.control.updateVehicle(vehicle.id, { vpnConnected: true });
  }
  await a.h.tick('vehicles');
  for (const id of ['veh-0001', 'veh-0002', 'veh-0003'])
    a.h.sim.control.updateVehicle(id, { vpnConnected: false });
  a.h.advance(1_000);
  await a.h.tick('vehicles');
});

afterAll(async () => {
  await a?.close();
});

async function get<T>(url: string, status = 200): Promise<T> {
  const response = await a.app.inject({ url, headers: bearer() });
  expect(response.statusCode, response.body).toBe(status);
  return response.json();
}

async function ack(id: string, body: unknown, headers: Record<string, string> = bearer()) {
  return a.app.inject({ method: 'POST', url: `/api/incidents/${id}/ack`, headers, payload: body as object });
}

describe('GET /api/incidents', () => {
  it('lists the open incidents, oldest first, each not muted and not acknowledged', async () => {
    const page = await get<IncidentPage>('/api/incidents');
    expect(page.total).toBe(3);
    expect(page.nextCursor).toBeNull();
    expect(page.items.map((item) => item.subject)).toEqual([
      'vehicle/veh-0001',
      'vehicle/veh-0002',
      'vehicle/veh-0003',
    ]);
    expect(page.items[0]).toMatchObject({
      key: 'vpn',
      type: 'vehicle.vpn.disconnected',
      severity: 'warning',
      state: 'open',
      muted: null,
      acknowledged: false,
      acknowledgement: null,
      closedAt: null,
    });
    expect(page.items[0]?.id).toMatch(/^vpn-veh-0001-[0-9a-f]{8}$/);
    expect(await get(`/api/incidents/${page.items[0]?.id}`)).toEqual(page.items[0]);
  });

  it('filters by type, subject and severity, and pages', async () => {
    expect((await get<IncidentPage>('/api/incidents?type=robot.*')).total).toBe(0);
    expect((await get<IncidentPage>('/api/incidents?severity=critical')).total).toBe(0);
    expect((await get<IncidentPage>('/api/incidents?subject=vehicle/veh-0002,vehicle/veh-0003')).total).toBe(
      2,
    );
    const first = await get<IncidentPage>('/api/incidents?limit=2');
    expect(first.items).toHaveLength(2);
    const second = await get<IncidentPage>(`/api/incidents?limit=2&cursor=${first.nextCursor}`);
    expect(second.items.map((item) => item.subject)).toEqual(['vehicle/veh-0003']);
    expect(second.nextCursor).toBeNull();
  });

  it('answers a bad filter with 400 naming it, and an unknown id with 404', async () => {
    const state = await get<{ error: { message: string } }>('/api/incidents?state=sleeping', 400);
    expect(state.error.message).toContain('query.state: must be any of open, active, acknowledged');
    const glob = await get<{ error: { message: string } }>('/api/incidents?type=vehicle.%5B', 400);
    expect(glob.error.message).toContain('query.type: "vehicle.["');
    expect(
      (await get<{ error: { message: string } }>('/api/incidents?cursor=nope!', 400)).error.message,
    ).toContain('query.cursor');
    await get('/api/incidents/vpn-nothing-00000000', 404);
  });

  it('says which incidents a silence mutes right now', async () => {
    const silences = new SilenceStore({ redis: a.h.redis, prefix: a.h.prefix });
    const added = await silences.add(
      { matchers: { subject: 'vehicle/veh-0002' }, duration: '1h', createdBy: 'dana', comment: 'works' },
      Date.now(),
    );
    if (!added.ok) throw new Error(added.problems.join('; '));
    // Within the reader's silence cache (2 s), as in every replica.
    const silenced = await eventually(
      () => get<IncidentPage>('/api/incidents?state=silenced'),
      (page) => page.total > 0,
      { intervalMs: 100 },
    );
    expect(silenced.items.map((item) => [item.subject, item.muted])).toEqual([
      ['vehicle/veh-0002', { reason: 'silenced', by: added.silence.id }],
    ]);
    const active = await get<IncidentPage>('/api/incidents?state=active');
    expect(active.items.map((item) => item.subject)).toEqual(['vehicle/veh-0001', 'vehicle/veh-0003']);
  });
});

describe('POST /api/incidents/{id}/ack', () => {
  it('acknowledges an open incident with its event, and logs who asked', async () => {
    const [incident] = (await get<IncidentPage>('/api/incidents?subject=vehicle/veh-0001')).items;
    expect((await ack(incident!.id, { comment: 'on it', author: 'dana' }, {})).statusCode).toBe(401);
    const response = await ack(incident!.id, { comment: 'on it', author: 'dana', for: '2h' });
    expect(response.statusCode, response.body).toBe(200);
    const view: IncidentView = response.json();
    expect(view).toMatchObject({ id: incident!.id, acknowledged: true });
    expect(view.acknowledgement).toMatchObject({ by: 'dana', comment: 'on it', active: true });
    const until = Date.parse(view.acknowledgement?.until ?? '') - Date.parse(view.acknowledgement?.at ?? '');
    expect(until).toBe(2 * 3_600_000);
    const events = await a.h.newFleetEvents();
    const logged = events.filter((event) => event.type === 'incident.acknowledged');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      subject: `incident/${incident!.id}`,
      id: view.acknowledgement?.eventId,
      data: { entity: 'vehicle/veh-0001', key: 'vpn', by: 'dana', comment: 'on it' },
    });
    expect(logs.lines.some((line) => line.includes('incident acknowledged through the API'))).toBe(true);
    const acknowledged = await get<IncidentPage>('/api/incidents?state=acknowledged');
    expect(acknowledged.items.map((item) => item.id)).toEqual([incident!.id]);
  });

  it('refuses bad input with 400 naming the field, and an unknown incident with 404', async () => {
    const [incident] = (await get<IncidentPage>('/api/incidents?subject=vehicle/veh-0003')).items;
    const tooLong = await ack(incident!.id, { comment: 'on it', author: 'dana', for: '30d' });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.message).toContain(
      'body.for: expected a duration between 1s and 7d, like 30s; got 30d',
    );
    const noComment = await ack(incident!.id, { author: 'dana' });
    expect(noComment.statusCode).toBe(400);
    expect(noComment.json().error.message).toContain('body.comment');
    const unknown = await ack(incident!.id, { comment: 'x', author: 'dana', later: true });
    expect(unknown.statusCode).toBe(400);
    expect((await ack('vpn-nothing-00000000', { comment: 'x', author: 'dana' })).statusCode).toBe(404);
    expect((await a.h.newFleetEvents()).filter((event) => event.type === 'incident.acknowledged')).toEqual(
      [],
    );
  });

  it('answers 409 once the incident has resolved, which stays readable as closed', async () => {
    const [incident] = (await get<IncidentPage>('/api/incidents?subject=vehicle/veh-0003')).items;
    a.h.sim.control.updateVehicle('veh-0003', { vpnConnected: true });
    a.h.advance(1_000);
    await a.h.tick('vehicles');
    expect((await get<IncidentPage>('/api/incidents')).items.map((item) => item.subject)).toEqual([
      'vehicle/veh-0001',
      'vehicle/veh-0002',
    ]);
    const closed = await get<IncidentView>(`/api/incidents/${incident!.id}`);
    expect(closed).toMatchObject({ state: 'closed', muted: null });
    expect(closed.closedAt).not.toBeNull();
    expect((await get<IncidentPage>('/api/incidents?state=closed')).items.map((item) => item.id)).toEqual([
      incident!.id,
    ]);
    const late = await ack(incident!.id, { comment: 'on it', author: 'dana' });
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe('incident_closed');
  });
});
