import { type RobotConfigValue, robotConfigDetector } from '../events/detectors/robot-config.js';
import type { RobotEnvelope } from '../upstream/schemas/robot.js';
import { defineEntityPoller } from './entity-poller.js';
import { batchSettings } from './settings.js';

/** An envelope without `data` says nothing is loaded, like `data: null`. */
function dataOf(envelope: RobotEnvelope): unknown {
  return envelope.data === undefined ? null : envelope.data;
}

/**
 * `robot_config`: `GET /v2/active_site`, `/v2/loaded_route` and `/v2/loaded_zone_set` per robot,
 * each envelope's `data` as one part of `{activeSite, loadedRoute, loadedZoneSet}` (→
 * `robot.config.changed` per part). The three reads are one observation: if any of them fails, the
 * observation fails (and changes nothing).
 */
export const robotConfigPoller = defineEntityPoller({
  name: 'robot_config',
  settings: batchSettings(300_000, 200),
  kind: 'robot',
  facet: 'config',
  detector: robotConfigDetector,
  read: async (ctx, id, signal): Promise<RobotConfigValue> => {
    const robots = ctx.upstream.robots;
    const [activeSite, loadedRoute, loadedZoneSet] = await Promise.all([
      robots.activeSite(id, { signal }),
      robots.loadedRoute(id, { signal }),
      robots.loadedZoneSet(id, { signal }),
    ]);
    return {
      activeSite: dataOf(activeSite),
      loadedRoute: dataOf(loadedRoute),
      loadedZoneSet: dataOf(loadedZoneSet),
    };
  },
});
