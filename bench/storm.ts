import { Redis } from 'ioredis';
import { pino } from 'pino';
import { catalogueEntry } from '../src/events/catalogue.js';
import type { FleetEvent } from '../src/events/types.js';
import { createProducerConnection, waitForReady } from '../src/lib/redis-connection.js';
import {
  createNotificationStep,
  type NotificationStep,
} from '../src/notifiers/dispatch/notification-step.js';
import type { RootRouteConfig } from '../src/notifiers/routing/config.js';
import { PrivateRedis } from '../test/support/private-redis.js';

/**
 * `npm run bench -- storm`: the notification step in a storm, a site going dark. N robots go down
 * at once and the route groups by `type`, so every `robot.health.down` lands in ONE aggregation
 * group that grows to N open incidents and N pending events; then the group is flushed (one
 * notification), the N robots come back and it is flushed again (one resolved notification). The
 * reference, measured in the same run: the same events with `group_by: ['...']`, one group per
 * robot, where no group grows. The events go in as the events worker hands them over, 16 at a
 * time. Measured in this process: CPU (fleetwatch's own code, as the daemon runs it), wall time,
 * the bytes its Redis connection wrote, and the private Redis server's CPU.
 */

export const STORM_SIZES = [1_000, 4_000, 10_000, 50_000] as const;
/** The events worker's concurrency (src/notifiers/dispatch/events-worker.ts). */
const CONCURRENCY = 16;
const RECEIVER = 'ops';

export interface StormRun {
  events: number;
  groupBy: 'type' | '...';
  /** Process CPU for both waves and both flushes, ms. */
  cpuMs: number;
  wallMs: number;
  redisCpuMs: number;
  /** Bytes the notification step's Redis connection wrote. */
  bytesWritten: number;
  /** Notifications handed to delivery. */
  notifications: number;
  /** Events those notifications carried. */
  carried: number;
}

export interface StormResult {
  runs: StormRun[];
}

function robotEvent(type: 'robot.health.down' | 'robot.health.up', robot: number, at: number): FleetEvent {
  return {
    specversion: '1.0',
    id: `storm-${type}-${robot}`,
    source: 'fleetwatch/bench',
    type,
    subject: `robot/storm-${robot}`,
    time: new Date(at).toISOString(),
    datacontenttype: 'application/json',
    data: {
      severity: catalogueEntry(type).severity,
      previous: type === 'robot.health.down' ? 'up' : 'down',
      current: type === 'robot.health.down' ? 'down' : 'up',
    },
  };
}

async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const user = Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]);
  const sys = Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);
  return (user + sys) * 1000;
}

async function dispatchAll(step: NotificationStep, events: readonly FleetEvent[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < events.length) {
        const event = events[next]!;
        next += 1;
        await step.dispatch(event);
      }
    }),
  );
}

export async function runOne(url: string, events: number, groupBy: StormRun['groupBy']): Promise<StormRun> {
  const admin = new Redis(url);
  const redis = createProducerConnection(url, { name: 'bench-storm' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  let clock = Date.now();
  let notifications = 0;
  let carried = 0;
  const route: RootRouteConfig = {
    receiver: RECEIVER,
    group_by: [groupBy],
    group_wait: 30_000,
    group_interval: 300_000,
    repeat_interval: 4 * 3_600_000,
    send_resolved: true,
    routes: [],
  };
  const step = createNotificationStep({
    config: {
      notifications: { route, entity_tags: [], maintenance: [] },
      receivers: [{ name: RECEIVER }],
    },
    redis,
    prefix: `storm-${groupBy === 'type' ? 'one' : 'each'}-${events}`,
    logger: pino({ enabled: false }),
    now: () => clock,
    hooks: {
      onHandedOff: (notification) => {
        notifications += 1;
        carried += notification.events.length;
      },
    },
  });
  try {
    const down = Array.from({ length: events }, (_, robot) => robotEvent('robot.health.down', robot, clock));
    const cpuBefore = process.cpuUsage();
    const redisBefore = await redisCpuMs(admin);
    const sentBefore = redis.stream.bytesWritten;
    const started = performance.now();
    await dispatchAll(step, down);
    clock += route.group_wait;
    while ((await step.flusher.runOnce()) > 0);
    clock += 60_000;
    const up = Array.from({ length: events }, (_, robot) => robotEvent('robot.health.up', robot, clock));
    await dispatchAll(step, up);
    clock += route.group_interval;
    while ((await step.flusher.runOnce()) > 0);
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    return {
      events,
      groupBy,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs,
      redisCpuMs: (await redisCpuMs(admin)) - redisBefore,
      bytesWritten: redis.stream.bytesWritten - sentBefore,
      notifications,
      carried,
    };
  } finally {
    await step.stop();
    redis.disconnect();
    admin.disconnect();
  }
}

/** Each size in one group, then one group per robot, on a private Redis (emptied between runs). */
export async function measureStorm(log: (message: string) => void): Promise<StormResult> {
  const server = await PrivateRedis.start();
  const runs: StormRun[] = [];
  try {
    for (const events of STORM_SIZES) {
      for (const groupBy of ['type', '...'] as const) {
        const run = await runOne(server.url, events, groupBy);
        log(
          `${events} robots down and up, ${groupBy === 'type' ? 'one group' : 'one group each'}: ${Math.round(run.cpuMs)} ms CPU, ${(run.bytesWritten / 2 ** 20).toFixed(1)} MB written, ${run.notifications} notifications`,
        );
        runs.push(run);
        const flush = new Redis(server.url);
        await flush.flushall();
        flush.disconnect();
      }
    }
  } finally {
    await server.stop();
  }
  return { runs };
}
