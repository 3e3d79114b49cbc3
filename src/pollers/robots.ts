import { robotMembershipDetector } from '../events/detectors/robot-membership.js';
import { commitList } from './list-poll.js';
import { definePoller } from './poller.js';
import { listSettings } from './settings.js';

/**
 * `robots`: one `GET /api/robots` per tick, the membership observation of the `fleet` ref
 * `robot/membership` (→ `robot.discovered` / `robot.removed`). A failed list removes nothing; an
 * element that names no device is left out, kept in the membership snapshot for the API, counted
 * and logged once per change (see list-poll.ts).
 */
export const robotsPoller = definePoller({
  name: 'robots',
  settings: listSettings(60_000),
  reads: 'robots',
  async poll(ctx) {
    const list = await ctx.observe((signal) => ctx.upstream.robots.listRobots({ signal }));
    await commitList(ctx, list, {
      poller: 'robots',
      kind: 'robot',
      upstream: 'robots',
      detector: robotMembershipDetector,
      options: ctx.detectors.robotMembership,
      idOf: (robot) => robot.deviceId,
      facetKeepsNamed: false,
    });
  },
});
