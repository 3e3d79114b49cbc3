import { type Config, configSchema } from '../config/schema.js';
import type { BehaviourOptions } from '../simulator/index.js';

/** The simulated client the demo's fleetwatch signs in as (the simulator's and examples/simulator.yaml's). */
export const DEMO_CLIENT = { id: 'fleetwatch-demo', secret: 'demo-secret' } as const;

/**
 * How the demo fleet changes by itself: rates are per entity per one-second tick, so a fleet of a
 * dozen vehicles and a few robots shows a VPN flap, a power change or a robot outage every few
 * seconds, and each lasts long enough to be seen going and coming back.
 */
export const DEMO_BEHAVIOURS: BehaviourOptions = {
  intervalMs: 1_000,
  vpnFlapRate: 0.008,
  vpnOutageMs: [4_000, 12_000],
  ipChangeRate: 0.3,
  ipLossRate: 0.2,
  powerChangeRate: 0.004,
  // Commands complete, so the scripted power-on always finishes.
  stuckCommandRate: 0,
  robotOutageRate: 0.006,
  robotOutageMs: [5_000, 15_000],
  leaseChangeRate: 0.004,
  feedbackChangeRate: 0.006,
  routeChangeRate: 0.002,
  commandProgressRate: 0.2,
};

export interface DemoConfigOptions {
  simulatorUrl: string;
  redisUrl: string;
  prefix: string;
  logLevel: string;
  /** Port of fleetwatch's HTTP server (/metrics, /healthz, the API) on loopback; 0 picks a free one. */
  httpPort?: number;
  /** Events listed per printed notification. */
  maxEvents?: number;
}

/**
 * The config the demo runs fleetwatch with: every poller each second or two, thresholds of one or
 * two observations, and two `console` receivers split by severity, as a real installation splits
 * its chat channels: warnings and criticals (and the resolutions of their incidents) to `alerts`,
 * grouped by event type after two seconds; info-level changes, most of the traffic, to a quieter
 * `changes`, batched for five seconds and then at most every ten. Built through the same schema as
 * a config file, so it is exactly what `fleetwatch run` would make of it.
 */
export function demoConfig(options: DemoConfigOptions): Config {
  return configSchema.parse(demoConfigInput(options));
}

/** The demo's config as a config file would hold it, for a caller that changes parts before parsing. */
export function demoConfigInput(options: DemoConfigOptions) {
  const url = options.simulatorUrl;
  return {
    installation: 'demo',
    upstream: {
      base_url: url,
      robot_base_url: url,
      auth_url: url,
      client_id: DEMO_CLIENT.id,
      client_secret: DEMO_CLIENT.secret,
      http: { request_timeout: '2s', retries: 1, retry_base_delay: '50ms', retry_max_delay: '500ms' },
    },
    redis: { url: options.redisUrl, prefix: options.prefix },
    log: { level: options.logLevel, format: 'auto' },
    pollers: {
      vehicles: { interval: '1s' },
      power: { interval: '1s' },
      robots: { interval: '2s' },
      robot_health: { interval: '1s' },
      robot_feedback: { interval: '2s' },
      robot_lease: { interval: '2s' },
      robot_command_queue: { interval: '2s' },
      robot_config: { interval: '5s' },
      // Short windows: a robot alert waits until the window holding its time is judged (the
      // upstream inhibition rule), so the demo's critical goes out seconds after the robot fails.
      upstream: { interval: '2s' },
    },
    worker: { concurrency: 8, shutdown_grace: '3s' },
    events: { log_max_length: 10_000 },
    detectors: {
      vpn: { failure_threshold: 1, success_threshold: 1 },
      health: { failure_threshold: 2, success_threshold: 1 },
      reachability: { failure_threshold: 2, success_threshold: 1 },
      // The seeded fleet reported its power up to an hour ago: not worth a warning in a demo.
      power: { stuck_after: '30s', stale_after: '24h' },
    },
    receivers: [
      {
        kind: 'console',
        name: 'alerts',
        stream: 'stdout',
        color: 'auto',
        max_events: options.maxEvents ?? 6,
      },
      {
        kind: 'console',
        name: 'changes',
        stream: 'stdout',
        color: 'auto',
        max_events: options.maxEvents ?? 6,
      },
    ],
    http: { host: '127.0.0.1', port: options.httpPort ?? 0 },
    notifications: {
      route: {
        // What no child route takes: the info-level changes, batched.
        receiver: 'changes',
        group_by: ['type'],
        group_wait: '5s',
        group_interval: '10s',
        repeat_interval: '10m',
        send_resolved: true,
        routes: [
          {
            // A minimum: warnings and criticals, and the resolutions of their incidents.
            match: { severity: 'warning' },
            receiver: 'alerts',
            group_by: ['type'],
            group_wait: '2s',
            group_interval: '2s',
          },
        ],
      },
    },
  };
}
