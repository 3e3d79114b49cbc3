import { normalizeFeedback, robotFeedbackDetector } from '../events/detectors/robot-feedback.js';
import { defineEntityPoller } from './entity-poller.js';
import { batchSettings } from './settings.js';

/**
 * `robot_feedback`: `GET /v2/platform-feedback` per robot, normalized (`normalizeFeedback`) to
 * autonomy, navigation and vehicle state (→ `robot.autonomy/navigation/state.changed`).
 */
export const robotFeedbackPoller = defineEntityPoller({
  name: 'robot_feedback',
  settings: batchSettings(30_000, 200),
  kind: 'robot',
  facet: 'feedback',
  detector: robotFeedbackDetector,
  read: async (ctx, id, signal) =>
    normalizeFeedback(await ctx.upstream.robots.platformFeedback(id, { signal })),
});
