import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/cli/exit-codes.js';
import { type Daemon, startDaemon } from '../../../src/daemon/index.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../../src/lib/redis-connection.js';
import { RedisHealth } from '../../../src/lib/redis-health.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { storeKeys } from '../../../src/store/keys.js';
import { exposedValue } from '../../metrics/helpers.js';
import { testConfig } from '../../pollers/harness.js';
import { runCli, writeSimulatorConfig } from '../../support/cli.js';
import { printOnFailure } from '../../support/daemon-process.js';
import { captureJsonLog } from '../../support/json-log.js';
import { freePort, PrivateRedis, redisServerAvailable } from '../../support/private-redis.js';
import { eventually, uniquePrefix } from '../../support/redis.js';

/**
 * Redis failing in each way it can, under a running daemon (in this process, against a private
 * `redis-server`): `/readyz` answers within a second naming the fault, `/metrics` answers within a
 * second showing the last reading, the log says once that Redis is out (and why) and once that it
 * is back; credentials Redis refuses are a configuration error for the CLI (exit 2) and a named
 * `authentication` fault for the daemon, which stays up and not ready.
 */

/** How long `/readyz` and `/metrics` may take to answer: a request still waiting then fails the test. */
const ANSWER_MS = 1_000;

interface Check {
  ok: boolean;
  state: string;
  error?: string;
  checkedAt: string;
}

interface ReadyBody {
  status: 'ready' | 'not_ready';
  error?: { code: string; message: string };
  checks: { redis: Check; upstream: Check };
}

/** GET `url`; throws when no whole answer arrived within ANSWER_MS. */
async function ask(url: string): Promise<{ status: number; text: string }> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(ANSWER_MS) });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    throw new Error(`${url} gave no answer within ${ANSWER_MS} ms (${(error as Error).message})`);
  }
}

async function readyz(address: string): Promise<{ status: number; body: ReadyBody }> {
  const { status, text } = await ask(`${address}/readyz`);
  return { status, body: JSON.parse(text) as ReadyBody };
}

/** The daemon's log at info, with the lines of the Redis health check picked out. */
function captureLog() {
  const log = captureJsonLog('info');
  return {
    ...log,
    /** `down` lines name a fault (`state`, `since`); `back` lines end one (`was`, `downMs`). */
    health() {
      const own = log.lines.filter((line) => 'redis' in line && 'state' in line);
      return {
        down: own.filter((line) => 'since' in line),
        back: own.filter((line) => 'was' in line),
      };
    },
  };
}

/** Asks `/readyz` until the Redis check names `state` in three answers taken at different times. */
async function untilNamed(address: string, state: string): Promise<{ status: number; body: ReadyBody }> {
  const taken = new Set<string>();
  return eventually(
    async () => {
      const answer = await readyz(address);
      if (answer.body.checks.redis.state === state) taken.add(answer.body.checks.redis.checkedAt);
      return answer;
    },
    (answer) => answer.body.checks.redis.state === state && taken.size >= 3,
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

describe.skipIf(!redisServerAvailable())('Redis faults under a running daemon', () => {
  let sim: Simulator;
  let server: PrivateRedis;
  let admin: Redis;
  let daemon: Daemon | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 2, robots: 1, seed: 3, behaviours: false });
    // Persistent, so stopping it (unreachable) loses nothing and the store is not reset.
    server = await PrivateRedis.start(undefined, { persistence: 'aof' });
    admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
  });

  afterAll(async () => {
    await daemon?.stop();
    admin?.disconnect();
    await server?.dispose();
    await sim?.close();
  });

  const snapshotDir = () => {
    if (!server.dataDir) throw new Error('the private Redis keeps no files');
    return server.dataDir;
  };
  /** Waits until no snapshot is under way and the last one ended `status`. */
  const untilSnapshot = (status: 'ok' | 'err') =>
    eventually(
      () => admin.info('persistence'),
      (info) =>
        info.includes('rdb_bgsave_in_progress:0') && info.includes(`rdb_last_bgsave_status:${status}`),
      { timeoutMs: 10_000, intervalMs: 50 },
    );

  it('names each fault in /readyz within a second, logs it once and its end once, and /metrics keeps answering', {
    timeout: 180_000,
  }, async (context) => {
    const prefix = uniquePrefix();
    const log = captureLog();
    printOnFailure(context, () => `--- daemon log ---\n${log.text()}\n--- redis ---\n${server.output()}`);
    const config = testConfig(sim.url, prefix, {
      redis: { url: server.url },
      // Every scrape reads Redis, so each one meets the fault.
      metrics: { fleet_cache: 0 },
    });
    const fw = startDaemon(config, { logger: log.logger });
    daemon = fw;
    const address = await fw.http!.listening;
    if (!address) throw new Error('the daemon did not listen');

    // A healthy start: ready, the check wrote its key, and the log says nothing of Redis.
    await eventually(
      () => readyz(address),
      (answer) => answer.status === 200,
      { timeoutMs: 20_000 },
    );
    expect(await admin.pttl(storeKeys(prefix).healthCheck)).toBeGreaterThan(0);
    const healthy = await eventually(
      async () => (await ask(`${address}/metrics`)).text,
      (text) =>
        (exposedValue(text, 'fleetwatch_vehicles{vpn="connected"}') ?? 0) +
          (exposedValue(text, 'fleetwatch_vehicles{vpn="disconnected"}') ?? 0) ===
        2,
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const connected = exposedValue(healthy, 'fleetwatch_vehicles{vpn="connected"}');
    expect(exposedValue(healthy, 'fleetwatch_redis_state{state="ok"}')).toBe(1);
    expect(log.health()).toEqual({ down: [], back: [] });

    const faults: Array<{
      state: string;
      says: RegExp;
      inject: () => Promise<unknown>;
      restore: () => Promise<unknown>;
    }> = [
      {
        state: 'refusing_writes',
        says: /^not ready: redis: refusing writes: OOM command not allowed/,
        inject: async () => {
          await admin.config('SET', 'maxmemory-policy', 'noeviction');
          await admin.config('SET', 'maxmemory', '1');
        },
        restore: () => admin.config('SET', 'maxmemory', '0'),
      },
      {
        state: 'refusing_writes',
        says: /^not ready: redis: refusing writes: READONLY/,
        // A replica of a primary that is not there: it serves reads and refuses every write.
        inject: async () => admin.replicaof('127.0.0.1', String(await freePort())),
        restore: () => admin.replicaof('NO', 'ONE'),
      },
      {
        state: 'refusing_writes',
        says: /^not ready: redis: refusing writes: MISCONF/,
        // A snapshot that cannot be written (its file name is taken by a directory): with save
        // points set, Redis refuses every write until a snapshot succeeds again.
        inject: async () => {
          mkdirSync(join(snapshotDir(), 'dump.rdb', 'taken'), { recursive: true });
          await admin.config('SET', 'save', '3600 1');
          await admin.bgsave();
          await untilSnapshot('err');
        },
        restore: async () => {
          rmSync(join(snapshotDir(), 'dump.rdb'), { recursive: true, force: true });
          await admin.bgsave();
          await untilSnapshot('ok');
          await admin.config('SET', 'save', '');
        },
      },
      {
        state: 'slow',
        says: /^not ready: redis: slow: no answer within 500 ms/,
        // Every client waits until the pause ends by itself (this one too).
        inject: () => admin.client('PAUSE', '6000', 'ALL'),
        restore: async () => {},
      },
      {
        state: 'unreachable',
        says: /^not ready: redis: unreachable: /,
        inject: () => server.stop('shutdown'),
        restore: () => server.start(),
      },
    ];

    for (const [index, fault] of faults.entries()) {
      await fault.inject();
      const named = await untilNamed(address, fault.state);
      expect(named.status).toBe(503);
      expect(named.body.status).toBe('not_ready');
      expect(named.body.checks.redis).toMatchObject({ ok: false, state: fault.state });
      expect(named.body.checks.upstream).toMatchObject({ ok: true, state: 'ok' });
      expect(named.body.error?.message).toMatch(fault.says);

      // Probes at once do not wait on each other, nor on Redis.
      const burst = await Promise.all(Array.from({ length: 5 }, () => readyz(address)));
      expect(burst.map((answer) => answer.body.checks.redis.state)).toEqual(Array(5).fill(fault.state));

      const scrape = await ask(`${address}/metrics`);
      expect(scrape.status).toBe(200);
      expect(exposedValue(scrape.text, 'fleetwatch_vehicles{vpn="connected"}')).toBe(connected);
      expect(exposedValue(scrape.text, `fleetwatch_redis_state{state="${fault.state}"}`)).toBe(1);
      expect(exposedValue(scrape.text, 'fleetwatch_redis_state{state="ok"}')).toBe(0);

      await fault.restore();
      await eventually(
        () => readyz(address),
        (answer) => answer.status === 200,
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      const { down, back } = log.health();
      // One line when it went, one when it came back: however many checks and commands failed.
      expect(down).toHaveLength(index + 1);
      expect(back).toHaveLength(index + 1);
      expect(down[index]).toMatchObject({ level: 40, state: fault.state, redis: server.url });
      expect(back[index]).toMatchObject({ level: 30, state: 'ok', was: fault.state });
      expect(back[index]!.downMs).toBeGreaterThan(0);
      expect(back[index]!.msg).toMatch(/^Redis is back \(out for \d+\.\d s: /);
    }
    expect(log.health().down.map((line) => line.msg)).toEqual([
      expect.stringMatching(/^Redis refuses writes \(OOM command not allowed/),
      expect.stringMatching(/^Redis refuses writes \(READONLY/),
      expect.stringMatching(/^Redis refuses writes \(MISCONF/),
      'Redis is not answering: a write got no answer within 500 ms; not ready until it answers',
      expect.stringMatching(/^Redis is unreachable \(/),
    ]);
  });
});

describe.skipIf(!redisServerAvailable())('credentials Redis refuses', () => {
  const PASSWORD = 'the-right-password';
  const WRONG = 'not-the-password';
  let sim: Simulator;
  let server: PrivateRedis;
  let admin: Redis;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 1, robots: 0, seed: 4, behaviours: false });
    server = await PrivateRedis.start();
    admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
    await admin.config('SET', 'requirepass', PASSWORD);
    await admin.auth(PASSWORD);
    // A user that may run anything, but only on keys fleetwatch does not use.
    await admin.acl('SETUSER', 'elsewhere', 'on', '>elsewhere-pass', '~elsewhere:*', '+@all');
  });

  afterAll(async () => {
    admin?.disconnect();
    // SIGKILL: its SHUTDOWN would need the password.
    await server?.dispose();
    await sim?.close();
  });

  const urlWith = (credentials: string) => `redis://${credentials}127.0.0.1:${server.port}`;

  it.each([
    {
      case: 'a wrong password',
      credentials: `:${WRONG}@`,
      shown: ':[REDACTED]@',
      says: /refused the credentials in redis\.url \(WRONGPASS /,
    },
    {
      case: 'no password',
      credentials: '',
      shown: '',
      says: /requires a password and redis\.url gives none \(NOAUTH /,
    },
    {
      case: 'a user its ACL refuses',
      credentials: 'elsewhere:elsewhere-pass@',
      shown: 'elsewhere:[REDACTED]@',
      says: /refused a command to the user of redis\.url \(NOPERM /,
    },
  ])(
    'the CLI exits 2 with one line naming the credentials of redis.url: $case',
    async ({ credentials, shown, says }) => {
      const url = urlWith(credentials);
      const file = writeSimulatorConfig(sim.url, `redis:\n  url: ${url}\n  prefix: ${uniquePrefix()}\n`);
      const run = await runCli(['events', 'list'], { FLEETWATCH_CONFIG: file, FLEET_SECRET: 'demo-secret' });
      expect(run.code).toBe(ExitCode.usage);
      const lines = run.stderr.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.startsWith(`fleetwatch: Redis at ${urlWith(shown)} `)).toBe(true);
      expect(lines[0]).toMatch(says);
      expect(run.stderr).not.toContain(WRONG);
      expect(run.stderr).not.toContain('elsewhere-pass');
    },
  );

  it('the daemon logs a wrong password once and stays up, not ready, naming authentication; /metrics answers', {
    timeout: 60_000,
  }, async (context) => {
    const log = captureLog();
    printOnFailure(context, () => `--- daemon log ---\n${log.text()}`);
    const config = testConfig(sim.url, uniquePrefix(), { redis: { url: urlWith(`:${WRONG}@`) } });
    const fw = startDaemon(config, { logger: log.logger });
    try {
      const address = await fw.http!.listening;
      if (!address) throw new Error('the daemon did not listen');
      const named = await untilNamed(address, 'authentication');
      expect(named.status).toBe(503);
      expect(named.body.checks.redis).toMatchObject({ ok: false, state: 'authentication' });
      expect(named.body.error?.message).toMatch(/^not ready: redis: authentication refused: WRONGPASS /);

      const scrape = await ask(`${address}/metrics`);
      expect(scrape.status).toBe(200);
      expect(exposedValue(scrape.text, 'fleetwatch_redis_state{state="authentication"}')).toBe(1);

      // Said once, as an error naming redis.url's credentials, however many checks failed since.
      const { down, back } = log.health();
      expect(down).toHaveLength(1);
      expect(back).toHaveLength(0);
      expect(down[0]).toMatchObject({ level: 50, state: 'authentication' });
      const refusal = `Redis at ${urlWith(':[REDACTED]@')} refused the credentials in redis.url (WRONGPASS `;
      expect(String(down[0]!.msg).startsWith(refusal)).toBe(true);
      expect(log.text()).not.toContain(WRONG);
    } finally {
      await fw.stop();
    }
  });
});

describe.skipIf(!redisServerAvailable())('a database the server does not have', () => {
  let sim: Simulator;
  let server: PrivateRedis;
  let admin: Redis;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 1, robots: 0, seed: 4, behaviours: false });
    server = await PrivateRedis.start();
    admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
  });

  afterAll(async () => {
    admin?.disconnect();
    await server?.dispose();
    await sim?.close();
  });

  const says = /has no such database \(ERR DB index is out of range\): the number at the end of redis\.url/;

  it('the CLI exits 2 with one line instead of reading database 0', async () => {
    const prefix = uniquePrefix();
    const file = writeSimulatorConfig(sim.url, `redis:\n  url: ${server.url}/99\n  prefix: ${prefix}\n`);
    const run = await runCli(['events', 'list'], { FLEETWATCH_CONFIG: file, FLEET_SECRET: 'demo-secret' });
    expect(run.code).toBe(ExitCode.usage);
    const lines = run.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^fleetwatch: Redis at ${server.url}/99 `));
    expect(lines[0]).toMatch(says);
  });

  it('the daemon refuses it in one line and stops, writing nothing to database 0', async () => {
    const prefix = uniquePrefix();
    const { lines, logger } = captureJsonLog();
    const config = testConfig(sim.url, prefix, { redis: { url: `${server.url}/99` } });
    const fw = startDaemon(config, { logger });
    try {
      await fw.stopped;
      expect(fw.refused).toMatch(says);
      expect(lines.filter((line) => line.level === 50).map((line) => line.msg)).toEqual([fw.refused]);
      expect(await admin.keys('*')).toEqual([]);
    } finally {
      await fw.stop();
    }
  });
});

describe.skipIf(!redisServerAvailable())('the Redis health check', () => {
  it('keeps one write in flight however often it is asked while Redis holds writes, and answers each ask in time', async () => {
    const server = await PrivateRedis.start();
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
    const template = createProducerConnection(server.url, { name: 'template' });
    let health: RedisHealth | undefined;
    try {
      await waitForReady(template, { timeoutMs: 5_000 });
      const setCalls = async () =>
        Number(/cmdstat_set:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
      const before = await setCalls();
      // Writes wait until the pause ends; reads (INFO) go on.
      await admin.client('PAUSE', '3000', 'WRITE');
      health = new RedisHealth({
        redis: template,
        key: `{${uniquePrefix()}}:health`,
        budgetMs: 100,
        cacheMs: 60_000,
      });
      const asked = await Promise.all(Array.from({ length: 20 }, () => health!.check()));
      expect(asked.map((answer) => answer.state)).toEqual(Array(20).fill('slow'));
      // Still one write under way: asking again does not send another.
      const again = await Promise.all(Array.from({ length: 20 }, () => health!.check()));
      expect(again.map((answer) => answer.state)).toEqual(Array(20).fill('slow'));

      const answered = await eventually(
        () => health!.check(),
        (answer) => answer.ok,
        { timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(answered.state).toBe('ok');
      expect((await setCalls()) - before).toBe(1);
    } finally {
      await health?.stop();
      await closeQuietly([template, admin]);
      await server.dispose();
    }
  });
});
