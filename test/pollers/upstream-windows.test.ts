import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UpstreamWindows } from '../../src/pollers/upstream-windows.js';
import { suiteConnection } from '../support/redis.js';

const prefix = `tc-${randomBytes(5).toString('hex')}`;
const redis = suiteConnection(prefix);

describe('upstream counting windows', () => {
  it('counts a call the APIs accepted with the token as a good request of the token issuer', async () => {
    const at = 15_000 * 1_000;
    const windows = new UpstreamWindows({ redis, prefix, windowMs: 15_000, now: () => at });
    windows.record({ operation: 'oauth_token', status: 200 }, at);
    for (const status of [200, 200, 404, 409]) windows.record({ operation: 'robot.health', status }, at);
    windows.record({ operation: 'list_vehicles', status: 200 }, at);
    // Refused, or gateway trouble: nothing about the token.
    for (const status of [401, 403, 503, 'timeout', 'network'] as const) {
      windows.record({ operation: 'robot.health', status }, at);
    }
    await windows.flush();
    const counts = await windows.read(1_000);
    expect(counts.token).toEqual({
      requests: 6,
      authFailures: 0,
      serverErrors: 0,
      timeouts: 0,
      unreadable: 0,
    });
    expect(counts.robots).toEqual({
      requests: 9,
      authFailures: 2,
      serverErrors: 1,
      timeouts: 2,
      unreadable: 0,
    });
    expect(counts.fleet).toEqual({
      requests: 1,
      authFailures: 0,
      serverErrors: 0,
      timeouts: 0,
      unreadable: 0,
    });
  });

  it('leaves a window of a failing issuer to its own answers: no token, no API call', async () => {
    const at = 15_000 * 2_000;
    const windows = new UpstreamWindows({ redis, prefix, windowMs: 15_000, now: () => at });
    for (let i = 0; i < 12; i += 1) windows.record({ operation: 'oauth_token', status: 401 }, at);
    for (let i = 0; i < 12; i += 1) windows.record({ operation: 'oauth_token', status: 503 }, at + 1);
    await windows.flush();
    expect((await windows.read(2_000)).token).toEqual({
      requests: 24,
      authFailures: 12,
      serverErrors: 12,
      timeouts: 0,
      unreadable: 0,
    });
  });

  it('counts a call once, by its first attempt: two unanswering robots of six stay a third', async () => {
    const at = 15_000 * 3_000;
    const windows = new UpstreamWindows({ redis, prefix, windowMs: 15_000, now: () => at });
    for (let robot = 0; robot < 6; robot += 1) {
      const down = robot < 2;
      windows.record({ operation: 'robot.health', status: down ? 503 : 200 }, at);
      if (down)
        for (let retry = 0; retry < 2; retry += 1)
          windows.record({ operation: 'robot.health', status: 503, retry: true }, at);
    }
    await windows.flush();
    expect((await windows.read(3_000)).robots).toEqual({
      requests: 6,
      authFailures: 0,
      serverErrors: 2,
      timeouts: 0,
      unreadable: 0,
    });
  });

  it('counts an answer whose body is not as the spec says beside its exchange, as a failure of its upstream', async () => {
    const at = 15_000 * 4_000;
    const windows = new UpstreamWindows({ redis, prefix, windowMs: 15_000, now: () => at });
    for (let robot = 0; robot < 6; robot += 1) {
      windows.record({ operation: 'robot.health', status: 200 }, at);
      if (robot < 4) windows.observer.unreadable?.({ operation: 'robot.health' });
    }
    windows.observer.unreadable?.({ operation: 'oauth_token' });
    await windows.flush();
    const counts = await windows.read(4_000);
    expect(counts.robots).toEqual({
      requests: 6,
      authFailures: 0,
      serverErrors: 0,
      timeouts: 0,
      unreadable: 4,
    });
    expect(counts.token).toEqual({
      requests: 6,
      authFailures: 0,
      serverErrors: 0,
      timeouts: 0,
      unreadable: 1,
    });
  });
});
