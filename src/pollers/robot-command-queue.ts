import { isRecord } from '../events/detectors/define.js';
import {
  type CommandQueueValue,
  robotCommandQueueDetector,
} from '../events/detectors/robot-command-queue.js';
import { InvalidPayloadError } from '../upstream/errors.js';
import type { RobotEnvelope } from '../upstream/schemas/robot.js';
import { defineEntityPoller } from './entity-poller.js';
import { batchSettings } from './settings.js';

/**
 * The queued commands of a command-queue answer, which has no public field list: the envelope's
 * `data` when it is a list, else the first list among its fields. Anything else is an invalid
 * payload (an observation error: it changes nothing).
 */
export function queuedCommands(envelope: RobotEnvelope, deviceId: string): readonly unknown[] {
  const { data } = envelope;
  if (Array.isArray(data)) return data;
  const list = isRecord(data) ? Object.values(data).find(Array.isArray) : undefined;
  if (list) return list;
  throw new InvalidPayloadError(
    { operation: 'robot.command_queue', target: deviceId, subject: `robot "${deviceId}"` },
    'data is neither a list of commands nor an object holding one',
  );
}

/**
 * `robot_command_queue`: `GET /v2/command-queue` per robot → `{length}` (→
 * `robot.command_queue.backlog` / `drained` around `detectors.command_queue.backlog_threshold`).
 */
export const robotCommandQueuePoller = defineEntityPoller({
  name: 'robot_command_queue',
  settings: batchSettings(30_000, 200),
  kind: 'robot',
  facet: 'command_queue',
  detector: robotCommandQueueDetector,
  options: (ctx) => ctx.detectors.robotCommandQueue,
  read: async (ctx, id, signal): Promise<CommandQueueValue> => ({
    length: queuedCommands(await ctx.upstream.robots.commandQueue(id, { signal }), id).length,
  }),
});
