import { type LeaseValue, robotLeaseDetector } from '../events/detectors/robot-lease.js';
import { defineEntityPoller } from './entity-poller.js';
import { batchSettings } from './settings.js';

/** `robot_lease`: `GET /v2/teleop-control/status` per robot → `{holderId, expiresAt}` (→ `robot.lease.changed`). */
export const robotLeasePoller = defineEntityPoller({
  name: 'robot_lease',
  settings: batchSettings(60_000, 200),
  kind: 'robot',
  facet: 'lease',
  detector: robotLeaseDetector,
  read: async (ctx, id, signal): Promise<LeaseValue> => {
    const lease = await ctx.upstream.robots.teleopStatus(id, { signal });
    const value: LeaseValue = {};
    if (lease.holderId !== undefined) value.holderId = lease.holderId;
    if (lease.expiresAt !== undefined) value.expiresAt = lease.expiresAt;
    return value;
  },
});
