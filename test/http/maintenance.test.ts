import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../pollers/harness.js';
import { type AppHarness, appHarness, bearer, TOKEN } from './helpers.js';

/**
 * `GET /api/maintenance`: the configured windows, read-only, each with the occurrence open now and
 * the next one to open. One window is always open (every minute, for a day), one opens in the
 * future only (the first of January), one never within the horizon (the 29th of February on a
 * Monday, next in 2044).
 */

let a: AppHarness;

beforeAll(async () => {
  a = await appHarness({
    token: TOKEN,
    harness: { simulator: { vehicles: 1, robots: 0 }, prefix: `tm-${randomBytes(5).toString('hex')}` },
    config: (config) => ({
      ...config,
      notifications: testConfig(config.upstream.base_url, config.redis.prefix, {
        notifications: {
          maintenance: [
            { name: 'always', schedule: '* * * * *', duration: '1d', match: { subject: 'vehicle/north-*' } },
            { name: 'new-year', schedule: '0 0 1 1 *', duration: '1h', time_zone: 'Europe/Berlin' },
            { name: 'leap-monday', schedule: '0 0 29 2 mon', duration: '1h' },
          ],
        },
      }).notifications,
    }),
  });
});

afterAll(async () => {
  await a?.close();
});

describe('GET /api/maintenance', () => {
  it('lists each window with the occurrence open now and the next one', async () => {
    const before = Date.now();
    const response = await a.app.inject({ url: '/api/maintenance', headers: bearer() });
    const after = Date.now();
    expect(response.statusCode, response.body).toBe(200);
    const [always, newYear, leap] = response.json().items;

    expect(always).toMatchObject({
      name: 'always',
      schedule: '* * * * *',
      timeZone: 'UTC',
      durationMs: 86_400_000,
      match: { subject: 'vehicle/north-*' },
    });
    // Opened at the top of a minute at most a minute ago; the next opens at the next minute.
    const opened = Date.parse(always.active.startsAt);
    expect(opened % 60_000).toBe(0);
    expect(opened).toBeLessThanOrEqual(after);
    expect(opened).toBeGreaterThan(before - 60_000);
    expect(Date.parse(always.active.endsAt) - opened).toBe(86_400_000);
    expect(Date.parse(always.next.startsAt)).toBeGreaterThan(before);
    expect(Date.parse(always.next.startsAt) - opened).toBe(60_000);

    expect(newYear).toMatchObject({ name: 'new-year', timeZone: 'Europe/Berlin', match: null });
    // Midnight of the 1st of January in Berlin is 23:00Z on the 31st of December.
    expect(newYear.next.startsAt).toMatch(/-12-31T23:00:00\.000Z$/);
    expect(Date.parse(newYear.next.endsAt) - Date.parse(newYear.next.startsAt)).toBe(3_600_000);

    expect(leap).toMatchObject({ name: 'leap-monday', active: null, next: null });
  });

  it('needs read access', async () => {
    const response = await a.app.inject({ url: '/api/maintenance' });
    expect(response.statusCode).toBe(401);
  });
});
