import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { connectionOwner } from '../support/socket-owner.js';
import type { VerifiedDelivery } from '../support/webhook-receiver.js';
import { conclude, expectNothingLost } from './conclude.js';
import { stackPerFile } from './stack.js';

/**
 * Three replicas; one of them, chosen at random, is SIGKILLed at a random moment and replaced,
 * again and again, while the fleet keeps changing and every event is delivered to a webhook
 * receiver. A kill lands wherever it lands: mid-poll, mid-commit, in the relay, in a group flush,
 * in a delivery.
 *
 * One more kill is aimed: at the replica that is sending a webhook request, after the receiver took
 * it and before it answered. The sender never learns that it was delivered, so after the job's lock
 * runs out another replica sends the same notification again, under the same `webhook-id`: delivery
 * is at least once, and no sender can know better (the receiver's answer is what it lost). The test
 * shows that this happens, that it is the only way a notification arrives twice, and that a
 * receiver deduplicating on `webhook-id` sees every event exactly once.
 */

const KILLS = Math.max(1, Number(process.env.RESILIENCE_KILLS ?? 20));
/** The longest pause between two kills. */
const MAX_GAP_MS = 1_500;
/** How long the receiver takes to answer, as a real one that does some work would. */
const RECEIVER_DELAY_MS = 100;
/** How long the receiver holds the answer to the request whose sender is killed. */
const HELD_ANSWER_MS = 2_000;

describe('resilience: replicas SIGKILLed at random moments', () => {
  const stacks = stackPerFile();

  it('lose, double and invent nothing, from the change to the receiver', async (context) => {
    const current = await stacks.open(context, { seedOffset: 1, daemon: { batchSize: 5 } });
    const { receiver, replicas, random } = current;

    const ids = await current.learnFleet({ vehicles: 20, robots: 5 }, 3);
    // Requests take a while, so a kill often lands with polls in flight (leases held, commits
    // pending) or a webhook request under way (sent, but not yet answered and marked delivered).
    current.sim.control.setFaults({ latencyMs: 20, latencyJitterMs: 200 });
    receiver.answerWith({ status: 200, delayMs: RECEIVER_DELAY_MS });
    const driver = current.driveChanges(ids);
    const killedAt: number[] = [];
    let aimed: VerifiedDelivery | undefined;
    try {
      // The aimed kill: the next webhook request is held unanswered while its sender is found and killed.
      const seen = receiver.deliveries.length;
      receiver.respondWith({ status: 200, delayMs: HELD_ANSWER_MS });
      const request = (await receiver.waitFor(seen + 1, 30_000))[seen];
      const pids = replicas.running.map((daemon) => daemon.pid ?? -1);
      const pid = request ? connectionOwner(request.remotePort, receiver.port, pids) : undefined;
      const sender = replicas.running.find((daemon) => daemon.pid !== undefined && daemon.pid === pid);
      if (request && sender) {
        killedAt.push(Date.now());
        const started = await replicas.replace(sender);
        aimed = request;
        current.note(`SIGKILL ${sender.name} while it sent ${request.webhookId}; started ${started.name}`);
      } else {
        current.note('the aimed kill found no sender (no /proc here?); only random kills');
      }
      for (let i = 0; i < KILLS; i++) {
        await delay(random() * MAX_GAP_MS);
        killedAt.push(Date.now());
        const { killed, started } = await replicas.killOneAndReplace(random);
        current.note(
          `SIGKILL ${killed.name} (up ${Date.now() - killed.startedAt} ms); started ${started.name}`,
        );
      }
    } finally {
      await driver.stop();
      current.sim.control.clearFaults();
    }
    current.note(`chaos over: ${killedAt.length} kills, ${driver.changes} changes`);

    const conclusion = await conclude(current, {
      order: 1,
      scenario: 'replica kills',
      description:
        `3 \`fleetwatch run\` replicas on one Redis prefix; ${KILLS} times one of them, chosen at random, ` +
        `is SIGKILLed after a random pause (0–${MAX_GAP_MS / 1000} s) and a new one started, while 20 ` +
        'vehicles and 5 robots keep changing (VPN, address, power, health, lease, state, route); ' +
        `upstream answers take 20–220 ms and the receiver answers after ${RECEIVER_DELAY_MS} ms. One ` +
        'more kill is aimed at the replica sending a webhook request, before the receiver answers it.',
      faults: `${killedAt.length} SIGKILLs (${aimed ? 1 : 0} aimed at a sender mid-request)`,
      changes: driver.changes,
      // A job a killed replica held is taken again only once BullMQ finds it stalled (lock 30 s,
      // stalled check every 30 s), and the relay reclaims outbox entries after 30 s idle.
      timeoutMs: 120_000,
      notes: aimed
        ? [
            `aimed kill: the sender of ${aimed.webhookId} was SIGKILLed after the receiver took the ` +
              'request and before it answered; the notification was sent again under the same ' +
              'webhook-id once its job was found stalled',
          ]
        : [],
    });

    // A notification arrives twice only when a replica was killed while it was under way.
    const inFlightAtAKill = (webhookId: string) =>
      receiver.deliveries.some(
        (delivery) =>
          delivery.webhookId === webhookId &&
          killedAt.some(
            (at) => at >= delivery.receivedAt && at <= delivery.receivedAt + HELD_ANSWER_MS + 500,
          ),
      );
    const repeated = [...new Set(conclusion.ledger.redelivered.map((entry) => entry.split(' ')[0] ?? ''))];
    expect(repeated.filter((webhookId) => !inFlightAtAKill(webhookId))).toEqual([]);
    if (aimed) expect(repeated).toContain(aimed.webhookId);
    expectNothingLost(conclusion);
  });
});
