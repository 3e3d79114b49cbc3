import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/demo/redis.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { classifyRedisError, describeRefusal, RedisHealth } from '../../src/lib/redis-health.js';
import { captureJsonLog } from '../support/json-log.js';
import { connect, redisUrl, uniquePrefix } from '../support/redis.js';

/** A server's error reply as ioredis hands it over. */
function reply(message: string): Error {
  const error = new Error(message);
  error.name = 'ReplyError';
  return error;
}

describe('classifyRedisError', () => {
  it.each([
    ["OOM command not allowed when used memory > 'maxmemory'.", 'refusing_writes'],
    ["READONLY You can't write against a read only replica.", 'refusing_writes'],
    [
      'MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.',
      'refusing_writes',
    ],
    ['WRONGPASS invalid username-password pair or user is disabled.', 'authentication'],
    ['NOAUTH Authentication required.', 'authentication'],
    ["NOPERM User fw has no permissions to run the 'set' command", 'authentication'],
    ['ERR invalid password', 'authentication'],
    ['LOADING Redis is loading the dataset in memory', 'unreachable'],
    ['BUSY Redis is busy running a script.', 'slow'],
    ['ERR unknown command', 'error'],
  ])('%s → %s', (message, fault) => {
    expect(classifyRedisError(reply(message))).toBe(fault);
  });

  it('tells a connection that fails from one that does not answer', () => {
    expect(classifyRedisError(new Error('connect ECONNREFUSED 127.0.0.1:6379'))).toBe('unreachable');
    expect(
      classifyRedisError(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
    ).toBe('unreachable');
    expect(classifyRedisError(new Error('Command timed out'))).toBe('slow');
  });
});

describe('describeRefusal', () => {
  it('names redis.url and what it lacks', () => {
    const target = 'redis://fw:[REDACTED]@db:6379';
    expect(
      describeRefusal(reply('WRONGPASS invalid username-password pair or user is disabled.'), target),
    ).toBe(
      'Redis at redis://fw:[REDACTED]@db:6379 refused the credentials in redis.url (WRONGPASS invalid username-password pair or user is disabled.): check its user name and password',
    );
    expect(describeRefusal(reply('NOAUTH Authentication required.'), 'redis://db:6379')).toMatch(
      /^Redis at redis:\/\/db:6379 requires a password and redis\.url gives none \(NOAUTH/,
    );
    expect(
      describeRefusal(reply("NOPERM User fw has no permissions to run the 'set' command"), target),
    ).toMatch(/refused a command to the user of redis\.url \(NOPERM .*\): grant that user/);
  });
});

describe('RedisHealth', () => {
  it('writes its key with an expiry, and says nothing of a healthy Redis', async () => {
    const admin = connect();
    const template = createProducerConnection(redisUrl(), { name: 'test-health-template' });
    const key = `{${uniquePrefix()}}:health`;
    const log = captureJsonLog();
    const states: string[] = [];
    const health = new RedisHealth({
      redis: template,
      key,
      logger: log.logger,
      onState: (state) => states.push(state),
    });
    try {
      await waitForReady(template, { timeoutMs: 5_000 });
      const answer = await health.check();
      expect(answer).toMatchObject({ ok: true, state: 'ok' });
      expect(Date.parse(answer.checkedAt)).not.toBeNaN();
      const ttl = await admin.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
      expect(states).toEqual(['ok']);
      expect(log.lines).toEqual([]);
    } finally {
      await health.stop();
      await admin.del(key);
      await closeQuietly([template, admin]);
    }
  });

  it('names a Redis nothing listens for as unreachable, once in the log however often it is checked', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const template = createProducerConnection(url, { name: 'test-health-nowhere', lazyConnect: true });
    const log = captureJsonLog();
    const health = new RedisHealth({
      redis: template,
      key: '{t}:health',
      target: url,
      logger: log.logger,
      cacheMs: 0,
    });
    try {
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await health.check());
      expect(answers.map((answer) => answer.state)).toEqual(Array(5).fill('unreachable'));
      expect(answers[0]!.error).toMatch(/^unreachable: connect ECONNREFUSED/);
      expect(log.lines).toHaveLength(1);
      expect(log.lines[0]).toMatchObject({ level: 40, redis: url, state: 'unreachable' });
      expect(log.lines[0]!.msg).toMatch(
        /^Redis is unreachable \(connect ECONNREFUSED .*\); not ready until it is back$/,
      );
    } finally {
      await health.stop();
      await closeQuietly(template);
    }
  });
});
