import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { draft, EVENT } from '../../src/events/catalogue.js';
import type { IncidentView } from '../../src/incidents/view.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { EventLog } from '../../src/store/event-log.js';
import { IncidentStore } from '../../src/store/incidents.js';
import { SnapshotStore } from '../../src/store/snapshot-store.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';
import { connect, deletePrefixKeys, redisUrl } from '../support/redis.js';

/** `fleetwatch incidents` and `fleetwatch ack`, against incidents the commit opened in Redis. */

const prefix = `ti-${randomBytes(5).toString('hex')}`;
let admin: Redis;
let redis: Redis;
let store: SnapshotStore;
let incidents: IncidentStore;
let config: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'unused-secret', USER: 'dana' });

async function fire(
  ref: { kind: 'vehicle' | 'robot'; id: string; facet: string },
  event: ReturnType<typeof draft>,
) {
  const [record] = await store.read([ref]);
  const result = await store.commit(
    ref,
    record?.version ?? 0,
    { state: { n: (record?.version ?? 0) + 1 }, observedAt: new Date().toISOString() },
    [event],
  );
  if (!result.committed) throw new Error('commit refused');
}

beforeAll(async () => {
  admin = connect();
  redis = createProducerConnection(redisUrl(), { name: 'test-incidents-cli' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  store = new SnapshotStore({ redis, prefix, installation: 'cli-test' });
  incidents = new IncidentStore({ redis, prefix });
  config = writeSimulatorConfig('http://127.0.0.1:9', `redis:\n  url: ${redisUrl()}\n  prefix: ${prefix}\n`);
  const since = new Date(Date.now() - 600_000).toISOString();
  await fire(
    { kind: 'vehicle', id: 'veh-0001', facet: 'link' },
    draft(EVENT.vpnDisconnected, { previous: 'connected', current: 'disconnected', since, consecutive: 2 }),
  );
  await fire(
    { kind: 'robot', id: 'rb-0001', facet: 'health' },
    draft(EVENT.robotHealthDown, {
      previous: 'up',
      current: 'down',
      since,
      consecutiveFailures: 3,
      lastError: { code: 'timeout' },
    }),
  );
});

afterAll(async () => {
  await deletePrefixKeys(admin, prefix);
  await closeQuietly([redis, admin]);
});

describe('fleetwatch incidents', () => {
  it('lists the open incidents as a table, or as JSON', async () => {
    const text = await runCli(['incidents'], env());
    expect(text.code, text.stderr).toBe(ExitCode.ok);
    expect(text.stdout).toMatch(/^ID +SEVERITY +TYPE +SUBJECT +FOR +STANDING$/m);
    expect(text.stdout).toMatch(
      /^vpn-veh-0001-[0-9a-f]{8} +warning +vehicle\.vpn\.disconnected +vehicle\/veh-0001 +10m \d\ds +-$/m,
    );
    expect(text.stdout).toContain('2 open (0 acknowledged, 0 muted)');
    const json = await runCli(['incidents', '--json', '--severity', 'critical'], env());
    const items = JSON.parse(json.stdout) as IncidentView[];
    expect(items.map((item) => [item.type, item.subject])).toEqual([['robot.health.down', 'robot/rb-0001']]);
    const none = await runCli(['incidents', '--type', 'vehicle.power.*'], env());
    expect(none.stdout).toBe('no open incidents\n');
  });

  it('refuses a bad filter with exit 2, naming it', async () => {
    const state = await runCli(['incidents', '--state', 'asleep'], env());
    expect(state.code).toBe(ExitCode.usage);
    expect(state.stderr).toContain('--state: expected any of open, active, acknowledged');
    const severity = await runCli(['incidents', '--severity', 'loud'], env());
    expect(severity.code).toBe(ExitCode.usage);
    // One line, worded as every usage error is.
    expect(severity.stderr).toBe(
      'fleetwatch: incidents: --severity: expected info, warning or critical (got "loud") (add --help for usage)\n',
    );
    const glob = await runCli(['incidents', '--subject', 'robot/[rb'], env());
    expect(glob.code).toBe(ExitCode.usage);
    expect(glob.stderr).toContain('--subject: "robot/[rb"');
  });
});

describe('fleetwatch ack', () => {
  it('acknowledges an open incident for a while, logging incident.acknowledged', async () => {
    const open = await incidents.openOf('robot/rb-0001', 'health');
    const done = await runCli(['ack', open!.id, '--for', '2h', '--comment', 'on it'], env());
    expect(done.code, done.stderr).toBe(ExitCode.ok);
    expect(done.stdout).toContain(`${open!.id} acknowledged by dana until `);
    const record = await incidents.get(open!.id);
    expect(record?.ack).toMatchObject({ by: 'dana', comment: 'on it' });
    expect(Date.parse(record!.ack!.until) - Date.parse(record!.ack!.at)).toBe(7_200_000);
    const log = new EventLog({ redis, prefix });
    const [entry] = await log.range({ type: 'incident.acknowledged' });
    expect(entry?.event).toMatchObject({
      subject: `incident/${open!.id}`,
      data: { by: 'dana', entity: 'robot/rb-0001' },
    });
    const listed = await runCli(['incidents', '--state', 'acknowledged'], env());
    expect(listed.stdout).toContain('acknowledged by dana until');
  });

  it('refuses bad input with exit 2, an unknown incident with 4, a closed one with 1', async () => {
    const open = await incidents.openOf('vehicle/veh-0001', 'vpn');
    const noComment = await runCli(['ack', open!.id], env());
    expect(noComment.code).toBe(ExitCode.usage);
    expect(noComment.stderr).toContain('--comment: say why');
    const tooLong = await runCli(['ack', open!.id, '--for', '8d', '--comment', 'x'], env());
    expect(tooLong.code).toBe(ExitCode.usage);
    expect(tooLong.stderr).toContain('--for: expected a duration between 1s and 7d, like 30s; got 8d');
    const garbled = await runCli(['ack', open!.id, '--for', 'soon', '--comment', 'x'], env());
    expect(garbled.code).toBe(ExitCode.usage);
    expect(garbled.stderr).toContain('--for: expected a duration between 1s and 7d, like 30s; got soon');
    const unknown = await runCli(['ack', 'vpn-nothing-00000000', '--comment', 'x'], env());
    expect(unknown.code).toBe(ExitCode.notFound);

    await fire(
      { kind: 'vehicle', id: 'veh-0001', facet: 'link' },
      draft(EVENT.vpnConnected, {
        previous: 'disconnected',
        current: 'connected',
        since: open!.since,
        durationMs: 1,
      }),
    );
    const closed = await runCli(['ack', open!.id, '--comment', 'x'], env());
    expect(closed.code).toBe(ExitCode.failed);
    expect(closed.stderr).toContain('is not open');
  });
});
