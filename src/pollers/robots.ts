import { robotMembershipDetector } from '../events/detectors/robot-membership.js';
import { forgetRemoved } from './forget-removed.js';
import { mapObservation } from './observe.js';
import type { Poller } from './poller.js';
import { membershipRef } from './types.js';

/**
 * `robots`: one `GET /api/robots` per tick, the membership observation of the `fleet` ref
 * `robot/membership` (→ `robot.discovered` / `robot.removed`). A failed list removes nothing.
 */
export const robotsPoller: Poller = {
  name: 'robots',
  async poll(ctx) {
    const list = await ctx.observe((signal) => ctx.upstream.robots.listRobots({ signal }));
    const membership = await ctx.commit(
      { poller: 'robots', detector: robotMembershipDetector, options: ctx.detectors.robotMembership },
      [
        {
          ref: membershipRef('robot'),
          observation: mapObservation(list, (robots) => robots.map((robot) => robot.deviceId)),
        },
      ],
    );
    await forgetRemoved(ctx, 'robot', membership.events);
  },
};
