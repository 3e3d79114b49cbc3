import { expect } from 'vitest';
import type { RobotApi } from './robot-api.js';

/**
 * Sites, routes and zone sets share one shape on the robot (a named document, one of them loaded):
 * the steps each group's test runs through the API, named by the group's paths.
 */
export interface DocumentGroup {
  /** `sites`, `routes`, `zone_sets`. */
  collection: string;
  /** `active_site`, `loaded_route`, `loaded_zone_set`. */
  selected: string;
  /** `activate` or `load`. */
  select: string;
  /** The simulator's field naming the selected one, and the config facet's part. */
  part: 'activeSite' | 'loadedRoute' | 'loadedZoneSet';
  /** The operation ids of create, select and delete, as audited. */
  ids: { create: string; select: string; delete: string };
  body: Record<string, unknown>;
}

export async function documentLifecycle(api: RobotApi, group: DocumentGroup): Promise<void> {
  const base = `/api/robots/${api.robot}/${group.collection}`;
  const robot = () => api.a.h.sim.control.getRobot(api.robot)!;
  const name = 'north yard';
  const encoded = encodeURIComponent(name);

  const created = await api.request('POST', `${base}/${encoded}`, { body: group.body });
  expect(created.statusCode).toBe(200);
  expect(created.json().live.data.name).toBe(name);
  const again = await api.request('POST', `${base}/${encoded}`, { body: group.body });
  expect(again.statusCode).toBe(409);
  expect(again.json().error.code).toBe('upstream_conflict');

  const listed = (await api.request('GET', base)).json();
  expect(listed.live.data.map((doc: { name: string }) => doc.name)).toContain(name);
  const read = (await api.request('GET', `${base}/${encoded}`)).json();
  expect(read).toMatchObject({ operation: expect.any(String), live: { data: { name } }, snapshot: null });

  const updated = await api.request('PUT', `${base}/${encoded}`, { body: { ...group.body, note: 'moved' } });
  expect(updated.statusCode).toBe(200);
  expect(updated.json().live.data.note).toBe('moved');

  expect((await api.request('POST', `${base}/${encoded}/${group.select}`)).statusCode).toBe(200);
  expect(robot()[group.part]).toBe(name);

  // The selected one, live, beside what the robot_config poller stored: by name, not only a hash.
  await api.a.h.tick('robots', 'robot_config');
  const selected = (await api.request('GET', `/api/robots/${api.robot}/${group.selected}`)).json();
  expect(selected.live.data.name).toBe(name);
  expect(selected.snapshot).toMatchObject({ facet: 'config', config: { [group.part]: { name } } });
  expect(selected.snapshot.config[group.part].fields).toContain('note');

  const inUse = await api.request('DELETE', `${base}/${encoded}`);
  expect(inUse.statusCode).toBe(409);
  expect(inUse.json().error.details.upstreamMessage).toMatch(/in use/);

  const other = await api.request('POST', `${base}/spare`, { body: group.body });
  expect(other.statusCode).toBe(200);
  expect((await api.request('DELETE', `${base}/spare`)).statusCode).toBe(200);
  expect((await api.request('DELETE', `${base}/spare`)).statusCode).toBe(404);

  const audited = api.audits().map((line) => [line['operation'], line['status'], line['name'] ?? null]);
  expect(audited).toEqual([
    [group.ids.create, 200, name],
    [group.ids.create, 409, name],
    [expect.stringMatching(/^robot\.update_/), 200, name],
    [group.ids.select, 200, name],
    [group.ids.delete, 409, name],
    [group.ids.create, 200, 'spare'],
    [group.ids.delete, 200, 'spare'],
    [group.ids.delete, 404, 'spare'],
  ]);
}

/** A body that is not an object, or none where one is required, is refused before anything is sent. */
export async function refusesBadBodies(api: RobotApi, collection: string): Promise<void> {
  const base = `/api/robots/${api.robot}/${collection}`;
  const list = await api.request('PUT', `${base}/x`, { body: ['not', 'an', 'object'] });
  expect(list.statusCode).toBe(400);
  expect(list.json().error.message).toMatch(/^body: must be a JSON object/);
  const none = await api.request('POST', `${base}/x`);
  expect(none.statusCode).toBe(400);
  expect(none.json().error.message).toBe('body: is required (a JSON object)');
  const reader = await api.request('DELETE', `${base}/x`, { token: 'not-the-token-0123456789abcdef' });
  expect(reader.statusCode).toBe(401);
  expect(api.sent()).toBe(0);
  expect(api.audits()).toEqual([]);
}
