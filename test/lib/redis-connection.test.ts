import { describe, expect, it } from 'vitest';
import {
  closeQuietly,
  createProducerConnection,
  createWorkerConnection,
  duplicateForBlocking,
  EndingCluster,
  EndingRedis,
  retryDelay,
  waitForReady,
} from '../../src/lib/redis-connection.js';
import { freePort } from '../support/private-redis.js';
import { connect, killClientByName, redisUrl } from '../support/redis.js';

describe('retryDelay', () => {
  it('grows exponentially and caps at about 5 s', () => {
    const noJitter = () => 0;
    expect([1, 2, 3, 4, 5, 6, 7].map((times) => retryDelay(times, noJitter))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000,
    ]);
    expect(retryDelay(1_000, noJitter)).toBe(5000);
    expect(retryDelay(1_000, () => 1)).toBe(6000);
  });
});

describe('connections', () => {
  it('configures workers and producers as BullMQ expects', async () => {
    const worker = createWorkerConnection(redisUrl(), { name: 'test-worker', lazyConnect: true });
    const producer = createProducerConnection(redisUrl(), { name: 'test-producer', lazyConnect: true });
    try {
      expect(worker.options.maxRetriesPerRequest).toBeNull();
      expect(producer.options.enableOfflineQueue).toBe(false);
      expect(worker.options.connectionName).toBe('fleetwatch:test-worker');
      expect(worker.listenerCount('error')).toBeGreaterThan(0);
      // Fails fast instead of queueing while not connected.
      await expect(producer.ping()).rejects.toThrow();
      await waitForReady(producer, { timeoutMs: 5_000 });
      expect(await producer.ping()).toBe('PONG');
    } finally {
      await closeQuietly([worker, producer]);
    }
  });

  it('reconnects after the server drops the connection', async () => {
    const admin = connect();
    const redis = createWorkerConnection(redisUrl(), { name: 'test-reconnect' });
    try {
      await waitForReady(redis, { timeoutMs: 5_000 });
      const reconnected = new Promise<void>((resolve) => redis.once('ready', () => resolve()));
      expect(await killClientByName(admin, 'fleetwatch:test-reconnect')).toBe(1);
      await reconnected;
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await closeQuietly([redis, admin]);
    }
  });

  it('duplicates a blocking connection that fails fast', async () => {
    const redis = createProducerConnection(redisUrl(), { name: 'test-template' });
    const copy = duplicateForBlocking(redis, 'test-copy');
    try {
      await waitForReady(copy, { timeoutMs: 5_000 });
      expect(copy.options.connectionName).toBe('fleetwatch:test-copy');
      expect(copy.options.enableOfflineQueue).toBe(false);
      expect(copy.listenerCount('error')).toBeGreaterThan(0);
    } finally {
      await closeQuietly([redis, copy]);
    }
  });

  it('waitForReady honours abort and a closed connection', async () => {
    const redis = createProducerConnection(redisUrl(), { lazyConnect: true });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(waitForReady(redis, { signal: controller.signal })).rejects.toThrow('stop');
    await closeQuietly(redis);
    await expect(waitForReady(redis)).rejects.toThrow(/closed/);
  });

  it('closeQuietly is idempotent and tolerates undefined', async () => {
    const redis = createProducerConnection(redisUrl());
    await waitForReady(redis, { timeoutMs: 5_000 });
    await closeQuietly([redis, undefined]);
    await closeQuietly(redis);
    expect(redis.status).toBe('end');
  });

  it('closing a worker connection that waits to reconnect settles the commands it queued', async () => {
    // Nothing listens there: the client keeps reconnecting and queues commands meanwhile.
    const redis = createWorkerConnection(`redis://127.0.0.1:${await freePort()}`, { name: 'test-away' });
    await new Promise<void>((resolve) => redis.once('reconnecting', () => resolve()));
    expect(redis.status).toBe('reconnecting');
    const queued = redis.get('anything').then(
      () => 'answered',
      (error: Error) => error.message,
    );
    const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
    await closeQuietly(redis);
    expect(redis.status).toBe('end');
    await ended;
    expect(await queued).toBe('Connection is closed.');
  });

  it('ends a duplicate (a BullMQ blocking connection) that waits to reconnect', async () => {
    const redis = createWorkerConnection(`redis://127.0.0.1:${await freePort()}`, {
      name: 'test-away',
      lazyConnect: true,
    });
    const copy = redis.duplicate({ connectionName: 'test-copy', lazyConnect: false });
    try {
      expect(copy.options.connectionName).toBe('test-copy');
      expect(copy).toBeInstanceOf(EndingRedis);
      copy.on('error', () => {});
      await new Promise<void>((resolve) => copy.once('reconnecting', () => resolve()));
      const ended = new Promise<void>((resolve) => copy.once('end', () => resolve()));
      copy.disconnect();
      await ended;
      expect(copy.status).toBe('end');
    } finally {
      redis.disconnect();
    }
  });

  it('closing a Cluster client that waits to reconnect settles the commands it queued', async () => {
    const cluster = createWorkerConnection(
      { cluster: [`redis://127.0.0.1:${await freePort()}`] },
      { name: 'test-away' },
    );
    if (!(cluster instanceof EndingCluster)) throw new Error('a Cluster endpoint gives an EndingCluster');
    await new Promise<void>((resolve) => cluster.once('reconnecting', () => resolve()));
    const queued = cluster.get('anything').then(
      () => 'answered',
      (error: Error) => error.message,
    );
    const ended = new Promise<void>((resolve) => cluster.once('end', () => resolve()));
    cluster.disconnect();
    await ended;
    expect(cluster.status).toBe('end');
    expect(await queued).toBe('Connection is closed.');
    // A duplicate (how BullMQ makes its blocking connections) is of the same kind.
    const copy = cluster.duplicate([], { lazyConnect: true });
    expect(copy).toBeInstanceOf(EndingCluster);
    copy.disconnect();
  });

  it('a connected client still ends by its own close', async () => {
    const redis = createWorkerConnection(redisUrl(), { name: 'test-now' });
    await waitForReady(redis, { timeoutMs: 5_000 });
    const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
    redis.disconnect();
    await ended;
    expect(redis.status).toBe('end');
    await expect(redis.ping()).rejects.toThrow(/closed/);
  });
});
