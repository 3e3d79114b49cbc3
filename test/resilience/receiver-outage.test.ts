import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../src/notifiers/delivery/dead-letters.js';
import { runCli } from '../support/cli.js';
import { conclude, expectNothingLost } from './conclude.js';
import { waitForIdleDelivery } from './drain.js';
import { RECEIVER, stackPerFile } from './stack.js';

/**
 * The webhook receiver is down for long stretches while the fleet keeps changing, on a short retry
 * schedule (5 attempts in about 4 s):
 *
 * 1. it answers 503 with `Retry-After: 1` for much longer than the whole schedule: fleetwatch holds
 *    the receiver without using up attempts, and once it is back everything arrives, in order;
 * 2. it refuses connections for longer than the schedule: the notification at the head uses up its
 *    attempts and becomes a dead letter, then the next one, and so on. Once it is back the rest
 *    arrives in order, and `fleetwatch dlq replay --all` delivers the dead letters, each once.
 */

const RETRY_SCHEDULE = ['0s', '250ms', '500ms', '1s', '2s'];
const THROTTLED_MS = 9_000;
const REFUSED_MS = 9_000;
const CALM_MS = 1_500;

describe('resilience: receiver down for a long while', () => {
  const stacks = stackPerFile();

  it('deliver everything once, in order, dead letters through a replay', async (context) => {
    const current = await stacks.open(context, {
      seedOffset: 4,
      daemon: { batchSize: 5 },
      retrySchedule: RETRY_SCHEDULE,
    });
    const { receiver } = current;

    const ids = await current.learnFleet({ vehicles: 12, robots: 4 }, 2);
    const driver = current.driveChanges(ids);
    let throttledAnswers = 0;
    try {
      await delay(CALM_MS);
      current.note('receiver answers 503, Retry-After: 1');
      const before = receiver.deliveries.length;
      receiver.answerWith({ status: 503, headers: { 'retry-after': '1' } });
      await delay(THROTTLED_MS);
      receiver.answerWith(200);
      throttledAnswers = receiver.deliveries.length - before;
      current.note(`receiver back (${throttledAnswers} requests answered 503)`);
      await delay(CALM_MS);
      current.note('receiver refuses connections');
      await receiver.refuseConnections();
      await delay(REFUSED_MS);
      await receiver.listen();
      current.note('receiver listens again');
      await delay(CALM_MS);
    } finally {
      await driver.stop();
      await receiver.listen().catch(() => {});
    }

    // Everything still queued goes out; what ran out of attempts meanwhile is a dead letter.
    const deadLetters = await waitForIdleDelivery({
      admin: current.admin,
      prefix: current.prefix,
      receiverName: RECEIVER,
      timeoutMs: 60_000,
    });
    const cli = (...args: string[]) => runCli(['--config', current.configFile, ...args]);
    const listed = await cli('dlq', 'list', '--json');
    const letters = JSON.parse(listed.stdout || '[]') as DeadLetter[];
    const replay = await cli('dlq', 'replay', '--all');
    current.note(`dlq replay --all: exit ${replay.code}: ${replay.stdout.trim()}`);
    const replayed = new Set(letters.map((letter) => letter.notificationId));
    const eventsReplayed = letters.reduce((sum, letter) => sum + letter.events, 0);

    const conclusion = await conclude(current, {
      order: 4,
      scenario: 'receiver down',
      description:
        `2 replicas, 12 vehicles and 4 robots changing throughout; the receiver's retry schedule is ` +
        `[${RETRY_SCHEDULE.join(', ')}] (5 attempts in about 4 s). The receiver first answers 503 with ` +
        `\`Retry-After: 1\` for ${THROTTLED_MS / 1000} s, then refuses connections for ` +
        `${REFUSED_MS / 1000} s; what runs out of attempts is dead-lettered and sent again with ` +
        '`fleetwatch dlq replay --all`.',
      faults:
        `503 + Retry-After: 1 for ${THROTTLED_MS / 1000} s (${throttledAnswers} requests answered 503), ` +
        `connections refused for ${REFUSED_MS / 1000} s`,
      changes: driver.changes,
      replayed,
      notes: [
        `dead letters: ${deadLetters} notification(s) with ${eventsReplayed} event(s) ran out of attempts ` +
          `while connections were refused; \`dlq replay --all\` exited ${replay.code} and delivered them`,
      ],
    });
    expect(replay.code).toBe(0);
    // Attempts are not used up while the receiver says when to come back.
    expect(throttledAnswers).toBeGreaterThan(0);
    expect(deadLetters).toBeGreaterThan(0);
    expect(letters).toHaveLength(deadLetters);
    expect(conclusion.order).toEqual([]);
    expectNothingLost(conclusion);
  });
});
