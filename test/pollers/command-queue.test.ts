import { describe, expect, it } from 'vitest';
import { toObservationError } from '../../src/pollers/observe.js';
import { queuedCommands } from '../../src/pollers/robot-command-queue.js';

/** The command-queue answer has no public field list: the queue is found leniently, or refused. */

describe('queued commands of a command-queue answer', () => {
  it('are the envelope data when it is a list', () => {
    expect(queuedCommands({ status: 'success', data: [{ id: 'c-1' }, { id: 'c-2' }] }, 'R-1')).toHaveLength(
      2,
    );
    expect(queuedCommands({ data: [] }, 'R-1')).toEqual([]);
  });

  it('are the first list among the fields of the data otherwise', () => {
    const data = { total: 3, paused: false, commands: [1, 2, 3], history: [4] };
    expect(queuedCommands({ data }, 'R-1')).toEqual([1, 2, 3]);
  });

  it('are an invalid payload, naming the robot, when there is no list', () => {
    for (const data of [undefined, null, 'busy', 3, { total: 3 }]) {
      let thrown: unknown;
      try {
        queuedCommands({ data }, 'R-1');
      } catch (error) {
        thrown = error;
      }
      const observed = toObservationError(thrown);
      expect(observed.code, JSON.stringify(data)).toBe('invalid_payload');
      expect(observed.message).toContain('robot "R-1"');
      expect(observed.message).toContain('robot.command_queue');
    }
  });
});
