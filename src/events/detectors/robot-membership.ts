import { draft, EVENT } from '../catalogue.js';
import { createMembershipDetector } from './membership.js';

/**
 * `robot.discovered` / `robot.removed` from GET /api/robots (value: the device ids). See
 * membership.ts for the rules; the drafts carry `data.deviceId`, which is the event's subject.
 */
export const robotMembershipDetector = createMembershipDetector({
  discovered: (deviceId) => draft(EVENT.robotDiscovered, { deviceId }),
  removed: (deviceId, detail) => draft(EVENT.robotRemoved, { deviceId, ...detail }),
});
