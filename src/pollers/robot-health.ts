import { robotHealthDetector } from '../events/detectors/robot-health.js';
import { defineEntityPoller } from './entity-poller.js';
import { batchSettings } from './settings.js';

/**
 * `robot_health`: `GET /v2/health` per robot. Any answer the client accepts is a good check; any
 * failure (time-out, 5xx, unparseable body, 4xx) is a failed check (→ `robot.health.down/up`
 * after the thresholds).
 */
export const robotHealthPoller = defineEntityPoller({
  name: 'robot_health',
  settings: batchSettings(30_000, 200),
  kind: 'robot',
  facet: 'health',
  detector: robotHealthDetector,
  options: (ctx) => ctx.detectors.robotHealth,
  read: (ctx, id, signal) => ctx.upstream.robots.health(id, { signal }),
});
