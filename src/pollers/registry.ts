import type { Poller } from './poller.js';
import { powerPoller } from './power.js';
import { robotConfigPoller } from './robot-config.js';
import { robotFeedbackPoller } from './robot-feedback.js';
import { robotHealthPoller } from './robot-health.js';
import { robotLeasePoller } from './robot-lease.js';
import { robotsPoller } from './robots.js';
import type { PollerName } from './types.js';
import { upstreamPoller } from './upstream-health.js';
import { vehiclesPoller } from './vehicles.js';

/** Every poller by name; the poll worker dispatches on `job.data.poller`. */
export const POLLERS: Readonly<Record<PollerName, Poller>> = {
  vehicles: vehiclesPoller,
  power: powerPoller,
  robots: robotsPoller,
  robot_health: robotHealthPoller,
  robot_feedback: robotFeedbackPoller,
  robot_lease: robotLeasePoller,
  robot_config: robotConfigPoller,
  upstream: upstreamPoller,
};
