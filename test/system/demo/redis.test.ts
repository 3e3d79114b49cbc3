import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { NO_REDIS_MESSAGE, redisAnswers, startPrivateRedis } from '../../../src/demo/redis.js';

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

describe('the demo Redis', () => {
  it.skipIf(!hasRedisServer)('starts a private redis-server on a free port and stops it', async () => {
    const redis = await startPrivateRedis();
    expect(redis).toBeDefined();
    expect(redis!.source).toBe('private');
    expect(redis!.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(await redisAnswers(redis!.url)).toBe(true);
    await redis!.stop();
    expect(await redisAnswers(redis!.url, 300)).toBe(false);
  });

  it('explains in one line how to get a Redis', () => {
    expect(NO_REDIS_MESSAGE).not.toContain('\n');
    for (const hint of ['apt-get install redis-server', 'docker run -p 6379:6379 redis:7', 'REDIS_URL']) {
      expect(NO_REDIS_MESSAGE).toContain(hint);
    }
  });
});
