import { setTimeout as delay } from 'node:timers/promises';
import { describe, it } from 'vitest';
import { conclude, expectNothingLost } from './conclude.js';
import { RECEIVER, stackPerFile } from './stack.js';

/**
 * Per-entity order across replica kills (Guarantee 6): every vehicle's address and every robot's
 * lease holder move along a chain of values that are never reused, while replicas are SIGKILLed
 * again and again and the receiver takes a second to answer each request, so notifications queue
 * up and a kill often lands between a commit and its hand-off to BullMQ. Each entity's chain must
 * reach the receiver in the order it was committed ("reordered" in the report).
 */

const KILLS = Math.max(1, Number(process.env.RESILIENCE_ORDER_KILLS ?? 100));
/**
 * The pause between two kills: 1 s plus up to 2 s. With three replicas each lives about 6 s, so
 * most kills land in a running replica (polling, committing, relaying, dispatching) rather than
 * in one still starting.
 */
const MIN_GAP_MS = 1_000;
const GAP_JITTER_MS = 2_000;
/** A slow receiver: one second per request. */
const RECEIVER_DELAY_MS = 1_000;

describe('resilience: per-entity order through replica kills', () => {
  const stacks = stackPerFile();

  it('deliver each entity’s chain of changes in the order it was committed', {
    timeout: 480_000,
  }, async (context) => {
    const current = await stacks.open(context, {
      seedOffset: 6,
      // A dead replica's jobs move after 5 s rather than 30 s: with a kill every 2 s on average, a
      // delivery stalled by each one would otherwise hold the slow receiver most of the run.
      // Each type's group flushes every 3 s: two groups make fewer notifications than a receiver
      // answering in 1 s takes, so the queue drains instead of growing for as long as the run.
      daemon: {
        batchSize: 5,
        extra: {
          worker: { takeover_after: '5s' },
          notifications: {
            route: { receiver: RECEIVER, group_by: ['type'], group_wait: '500ms', group_interval: '3s' },
          },
        },
      },
    });
    const { receiver, replicas, random } = current;

    const ids = await current.learnFleet({ vehicles: 12, robots: 6 }, 3);
    current.sim.control.setFaults({ latencyMs: 10, latencyJitterMs: 100 });
    receiver.answerWith({ status: 200, delayMs: RECEIVER_DELAY_MS });
    const driver = current.driveChanges(ids, { chains: true });
    let kills = 0;
    try {
      for (; kills < KILLS; kills++) {
        await delay(MIN_GAP_MS + random() * GAP_JITTER_MS);
        const { killed, started } = await replicas.killOneAndReplace(random);
        current.note(
          `SIGKILL ${killed.name} (up ${Date.now() - killed.startedAt} ms); started ${started.name}`,
        );
      }
    } finally {
      await driver.stop();
      current.sim.control.clearFaults();
    }
    current.note(`chaos over: ${kills} kills, ${driver.changes} changes`);

    const conclusion = await conclude(current, {
      order: 6,
      scenario: 'order through kills',
      description:
        `3 \`fleetwatch run\` replicas on one Redis prefix; ${KILLS} times one of them, chosen at random, ` +
        `is SIGKILLed after a random pause (${MIN_GAP_MS / 1000}–${(MIN_GAP_MS + GAP_JITTER_MS) / 1000} s) and a new one started, while 12 ` +
        'vehicles change address and 6 robots change lease holder along chains of values never used ' +
        `twice; the receiver takes ${RECEIVER_DELAY_MS / 1000} s to answer each request; ` +
        '`worker.takeover_after` is 5 s and each type’s group flushes every 3 s.',
      faults: `${kills} SIGKILLs, a receiver answering after ${RECEIVER_DELAY_MS / 1000} s`,
      changes: driver.changes,
      // The slow receiver drains what queued up behind the last kills.
      timeoutMs: 240_000,
    });
    expectNothingLost(conclusion);
  });
});
