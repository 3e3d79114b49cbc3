import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DeadLetters } from '../../../src/notifiers/delivery/dead-letters.js';
import type { Notifier } from '../../../src/notifiers/notifier.js';
import { emailNotifierFactory } from '../../../src/notifiers/receivers/email/index.js';
import { type TestCertificate, TestSmtpServer, testCertificate } from '../../support/smtp-server.js';
import { DeliveryHarness, notification, silent, vpnLost } from './helpers.js';

const RECEIVER = 'ops-mail';
const PASSWORD = 'correct-horse-battery-staple';

let certificate: TestCertificate;
let h: DeliveryHarness;
let smtp: TestSmtpServer;
let notifier: Notifier | undefined;

beforeAll(async () => {
  certificate = await testCertificate();
});

beforeEach(async () => {
  h = await new DeliveryHarness().open();
  smtp = await TestSmtpServer.start({ certificate, mode: 'starttls', users: { fleetwatch: PASSWORD } });
});

afterEach(async () => {
  await h.close();
  await notifier?.close?.();
  notifier = undefined;
  await smtp.close();
});

function ntf(id: string, vehicleId: string) {
  return notification(id, RECEIVER, [vpnLost(vehicleId)]);
}

/** The email receiver as the daemon builds it: the kind's factory, its own retry policy (made fast). */
async function startEmail(password = PASSWORD) {
  const config = emailNotifierFactory.configSchema.parse({
    kind: 'email',
    name: RECEIVER,
    smarthost: smtp.smarthost,
    ca: certificate.cert,
    auth: { username: 'fleetwatch', password },
    from: 'fleetwatch@fleet.example.com',
    to: ['ops@example.com'],
    timeout: '5s',
  });
  notifier = emailNotifierFactory.create(config, { logger: silent, secrets: h.secrets });
  return h.start({
    name: RECEIVER,
    kind: 'email',
    notifier,
    policy: emailNotifierFactory.retryPolicy(config, { backoff: { baseMs: 20, capMs: 80 } }),
  });
}

async function deadLetters() {
  const letters = new DeadLetters({
    connection: h.producer,
    prefix: h.prefix,
    receivers: [RECEIVER],
    disabledReceivers: h.disabledReceivers,
  });
  try {
    return await letters.list();
  } finally {
    await letters.close();
  }
}

describe('delivery by email', () => {
  it('a greylisting server (451, 451) gets the message on the third attempt, once, then the next one', async () => {
    smtp.answerWith({ code: 451, text: 'Greylisted, try again later' }, 451);
    await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
    const { watch, reports } = await startEmail();

    expect(await watch.nth('ntf-1')).toMatchObject({
      state: 'completed',
      result: { delivered: true, status: 250 },
    });
    expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
    const mails = await smtp.waitForMail(2);
    expect(mails.map((mail) => mail.parsed.headers.get('x-fleetwatch-notification'))).toEqual([
      'ntf-1',
      'ntf-2',
    ]);
    expect(reports.map((report) => [report.notificationId, report.outcome.kind, report.attempt])).toEqual([
      ['ntf-1', 'retry', 1],
      ['ntf-1', 'retry', 2],
      ['ntf-1', 'delivered', 3],
      ['ntf-2', 'delivered', 1],
    ]);
  });

  it('a 550 dead-letters the notification at once with the server text; the next one goes', async () => {
    smtp.answerWith({ code: 550, text: '5.7.1 Message refused by policy' });
    await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
    const { watch } = await startEmail();

    expect(await watch.nth('ntf-1')).toMatchObject({ state: 'failed' });
    expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
    const [letter] = await deadLetters();
    expect(letter).toMatchObject({ id: 'ntf-1', receiver: RECEIVER, attempts: 1 });
    expect(letter?.reason).toMatch(/answered 550 5\.7\.1 Message refused by policy to DATA$/);
  });

  it('a wrong password dead-letters each notification as an authentication failure, never showing it', async () => {
    const wrong = 'wrong-horse-battery-staple';
    await h.enqueue(ntf('ntf-1', 'veh-0001'));
    const { watch } = await startEmail(wrong);

    expect(await watch.nth('ntf-1')).toMatchObject({ state: 'failed' });
    const [letter] = await deadLetters();
    expect(letter?.reason).toMatch(/^authentication as fleetwatch at 127\.0\.0\.1:\d+ failed: 535 /);
    expect(JSON.stringify(letter)).not.toContain(wrong);
    expect(smtp.received).toEqual([]);
    // Rejected, not gone: the receiver is not disabled by a password that a config change fixes.
    expect(await h.disabledReceivers.status(RECEIVER)).toBeUndefined();
  });
});
