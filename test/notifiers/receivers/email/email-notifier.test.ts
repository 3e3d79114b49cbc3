import { type AddressInfo, createServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/log/logger.js';
import { SecretRegistry } from '../../../../src/log/secrets.js';
import type { DeliveryOutcome, Notifier } from '../../../../src/notifiers/notifier.js';
import { emailNotifierFactory } from '../../../../src/notifiers/receivers/email/index.js';
import {
  type TestCertificate,
  TestSmtpServer,
  type TestSmtpServerOptions,
  testCertificate,
} from '../../../support/smtp-server.js';
import { event, notification, vehicles, vpnBack, vpnLost } from '../slack/fixtures.js';

const PASSWORD = 'correct-horse-battery-staple';
const WRONG_PASSWORD = 'wrong-horse-battery-staple';
const USERS = { fleetwatch: PASSWORD };

let certificate: TestCertificate;
let servers: TestSmtpServer[];
let notifiers: Notifier[];
let lines: string[];
let outcomes: DeliveryOutcome[];

beforeAll(async () => {
  certificate = await testCertificate();
});

afterEach(async () => {
  await Promise.all(notifiers.map((notifier) => notifier.close?.()));
  await Promise.all(servers.map((server) => server.close()));
  // Guarantee 5: no form of a password shows in any reason or log line.
  for (const text of [...lines, ...outcomes.map((outcome) => JSON.stringify(outcome))]) {
    for (const secret of [PASSWORD, WRONG_PASSWORD, Buffer.from(PASSWORD).toString('base64')]) {
      expect(text).not.toContain(secret);
    }
  }
});

async function server(options: Partial<TestSmtpServerOptions> = {}): Promise<TestSmtpServer> {
  const started = await TestSmtpServer.start({ certificate, mode: 'starttls', users: USERS, ...options });
  servers.push(started);
  return started;
}

/**
 * A notifier on the test server. Its logger scrubs with a registry of its own that knows no
 * secret, so a password in a log line would show: nothing but the notifier keeps it out.
 */
function emailNotifier(
  smtp: { smarthost: string },
  overrides: Record<string, unknown> = {},
  consoleUrl?: string,
) {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ destination, format: 'json', level: 'debug', secrets: new SecretRegistry() });
  const config = emailNotifierFactory.configSchema.parse({
    kind: 'email',
    name: 'ops-mail',
    smarthost: smtp.smarthost,
    ca: certificate.cert,
    auth: { username: 'fleetwatch', password: PASSWORD },
    from: 'fleetwatch <fleetwatch@fleet.example.com>',
    to: ['ops@example.com', 'On call <oncall@example.com>'],
    subject: '[fleet]',
    timeout: '5s',
    ...overrides,
  });
  const notifier = emailNotifierFactory.create(config, {
    logger,
    secrets: new SecretRegistry(),
    ...(consoleUrl ? { consoleUrl } : {}),
  });
  notifiers.push(notifier);
  return notifier;
}

async function deliver(notifier: Notifier, ntf = notification([vpnLost('veh-0003')]), attempt = 1) {
  const outcome = await notifier.deliver(ntf, { attempt });
  outcomes.push(outcome);
  return outcome;
}

function reset() {
  servers = [];
  notifiers = [];
  lines = [];
  outcomes = [];
}

describe('EmailNotifier over a real SMTP server', () => {
  it('sends a firing group as one message with a text and an HTML part, over STARTTLS, authenticated', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp, {}, 'https://fleet.example.com/console');
    const ntf = notification(vehicles(3), { severity: 'critical' });

    expect(await deliver(notifier, ntf)).toEqual({ kind: 'delivered', status: 250 });
    const [mail] = await smtp.waitForMail(1);
    if (!mail) throw new Error('no mail');
    expect(mail.secure).toBe(true);
    expect(mail.user).toBe('fleetwatch');
    expect(smtp.authAttempts).toEqual(['ok fleetwatch']);
    expect(mail.mailFrom).toBe('fleetwatch@fleet.example.com');
    expect(mail.rcptTo).toEqual(['ops@example.com', 'oncall@example.com']);

    const parsed = mail.parsed;
    expect(parsed.subject).toBe('[fleet] [CRIT] 3 vehicles are off the VPN');
    expect(parsed.from?.value).toEqual([{ address: 'fleetwatch@fleet.example.com', name: 'fleetwatch' }]);
    const to = Array.isArray(parsed.to) ? parsed.to : [parsed.to];
    expect(to.flatMap((address) => address?.value.map((entry) => entry.address))).toEqual([
      'ops@example.com',
      'oncall@example.com',
    ]);
    expect(parsed.headers.get('auto-submitted')).toBe('auto-generated');
    expect(parsed.headers.get('x-fleetwatch-notification')).toBe('ntf-0001');
    expect(parsed.date?.toISOString()).toBe('2026-03-04T10:00:30.000Z');

    expect(parsed.text).toContain('[CRIT] 3 vehicles are off the VPN');
    expect(parsed.text).toContain('State:');
    expect(parsed.text).toContain('connected → disconnected');
    expect(parsed.text).toContain('- veh-0001 · since 2026-03-04 09:59:00 UTC');
    expect(parsed.text).toContain('Console, incidents: https://fleet.example.com/console/#/incidents');
    expect(parsed.html).toContain('<li>veh-0002 · since 2026-03-04 09:59:00 UTC</li>');
    expect(parsed.html).toContain('<a href="https://fleet.example.com/console/#/incidents">incidents</a>');
  });

  it('escapes an entity id in the HTML part; the text part carries it as it is', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp);
    const id = '<script>alert("x")</script>';

    expect(await deliver(notifier, notification([vpnLost(id)]))).toMatchObject({ kind: 'delivered' });
    const [mail] = await smtp.waitForMail(1);
    const html = mail?.parsed.html || '';
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(mail?.parsed.text).toContain('Vehicle:  <script>alert("x")</script>');
    expect(mail?.parsed.subject).toBe(
      '[fleet] [WARN] <script>alert("x")</script> is off the VPN: connected → disconnected',
    );
  });

  it('a resolution arrives as [RESOLVED] with how long it lasted', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp, { subject: undefined });
    const ntf = notification([vpnBack('veh-0003')], { status: 'resolved', severity: 'info' });

    expect(await deliver(notifier, ntf)).toMatchObject({ kind: 'delivered' });
    const [mail] = await smtp.waitForMail(1);
    expect(mail?.parsed.subject).toBe(
      '[RESOLVED] veh-0003 is back on the VPN: disconnected → connected after 3m 05s',
    );
    expect(mail?.parsed.text).toContain('Duration: 3m 05s');
  });

  it('implicit TLS (port 465 style) delivers over a session that was TLS from the start', async () => {
    reset();
    const smtp = await server({ mode: 'implicit' });
    const notifier = emailNotifier(smtp, { tls: 'implicit' });

    expect(await deliver(notifier)).toMatchObject({ kind: 'delivered' });
    const [mail] = await smtp.waitForMail(1);
    expect(mail?.secure).toBe(true);
    expect(mail?.user).toBe('fleetwatch');
  });

  it('tls: starttls refuses a server that offers no STARTTLS: nothing is sent in clear', async () => {
    reset();
    const smtp = await server({ mode: 'plain' });
    const notifier = emailNotifier(smtp);

    const outcome = await deliver(notifier);
    expect(outcome.kind).toBe('retry');
    expect(outcome).toMatchObject({ reason: expect.stringContaining('did not start TLS') });
    expect(smtp.received).toEqual([]);
    // The password never went over the plain connection.
    expect(smtp.authAttempts).toEqual([]);
  });

  it('tls: none sends in clear only when said so', async () => {
    reset();
    const smtp = await server({ mode: 'plain' });
    const notifier = emailNotifier(smtp, { tls: 'none', ca: undefined });

    expect(await deliver(notifier)).toMatchObject({ kind: 'delivered' });
    const [mail] = await smtp.waitForMail(1);
    expect(mail?.secure).toBe(false);
  });

  it('a certificate the client does not trust is a TLS failure, retried, saying why', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp, { ca: undefined });

    const outcome = await deliver(notifier);
    expect(outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('TLS with') });
    expect(outcome).toMatchObject({ reason: expect.stringContaining('trust the server') });
    expect(smtp.received).toEqual([]);
  });

  it('insecure_skip_verify accepts a certificate nobody vouches for, still over TLS', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp, { ca: undefined, insecure_skip_verify: true });

    expect(await deliver(notifier)).toMatchObject({ kind: 'delivered' });
    const [mail] = await smtp.waitForMail(1);
    expect(mail?.secure).toBe(true);
  });

  it('a wrong password is rejected as an authentication failure, without the password', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp, { auth: { username: 'fleetwatch', password: WRONG_PASSWORD } });

    const outcome = await deliver(notifier);
    expect(outcome).toMatchObject({ kind: 'rejected', status: 535 });
    expect(outcome).toMatchObject({
      reason: expect.stringMatching(/^authentication as fleetwatch at 127\.0\.0\.1:\d+ failed: .*535/),
    });
    expect(smtp.authAttempts).toEqual(['refused fleetwatch']);
    expect(smtp.received).toEqual([]);
    expect(lines.join('')).toContain('email delivery failed');
  });

  it('a 451 is retried and a 550 rejected, each with the server text', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp);
    smtp.answerWith(
      { code: 451, text: 'Try again later (greylisted)' },
      { code: 550, text: 'Message refused by policy' },
    );

    const greylisted = await deliver(notifier);
    expect(greylisted).toMatchObject({ kind: 'retry', status: 451 });
    expect(greylisted).toMatchObject({ reason: expect.stringContaining('Try again later (greylisted)') });
    const refused = await deliver(notifier, undefined, 2);
    expect(refused).toMatchObject({ kind: 'rejected', status: 550 });
    expect(refused).toMatchObject({ reason: expect.stringContaining('Message refused by policy') });
    expect(await deliver(notifier, undefined, 3)).toMatchObject({ kind: 'delivered' });
    expect(smtp.received).toHaveLength(1);
  });

  it('a notification sent twice carries the same Message-ID, Date and content (at least once)', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp);
    const ntf = notification(vehicles(2));
    const other = notification(vehicles(2), { id: 'ntf-0002' });

    await deliver(notifier, ntf);
    await deliver(notifier, ntf, 2);
    await deliver(notifier, other);
    const [first, second, third] = await smtp.waitForMail(3);
    expect(first?.parsed.messageId).toMatch(/^<[0-9a-f]{32}\.fleetwatch@fleet\.example\.com>$/);
    expect(second?.parsed.messageId).toBe(first?.parsed.messageId);
    expect(second?.parsed.date).toEqual(first?.parsed.date);
    expect(second?.parsed.text).toBe(first?.parsed.text);
    expect(third?.parsed.messageId).not.toBe(first?.parsed.messageId);
  });

  it('a server that does not answer in time is retried, naming the time-out', async () => {
    reset();
    // A listener that never speaks SMTP: no greeting ever comes.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const notifier = emailNotifier({ smarthost: `127.0.0.1:${port}` }, { timeout: '1s' });
      const outcome = await deliver(notifier);
      expect(outcome).toMatchObject({
        kind: 'retry',
        // The greeting's time-out or the whole exchange's, whichever fires first.
        reason: expect.stringMatching(new RegExp(`^no answer from 127\\.0\\.0\\.1:${port} within 1000 ms`)),
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a mixed group lists a line per event, marked, and counts what it leaves out', async () => {
    reset();
    const smtp = await server();
    const notifier = emailNotifier(smtp, { max_events: 2 });
    const mixed = [
      vpnLost('veh-0001'),
      vpnBack('veh-0002', 1_000),
      event('vehicle.discovered', 'veh-0009', { severity: 'info' }, 2_000),
    ];

    expect(await deliver(notifier, notification(mixed))).toMatchObject({ kind: 'delivered' });
    const [mail] = await smtp.waitForMail(1);
    expect(mail?.parsed.text).toContain('- [WARN] veh-0001 is off the VPN');
    expect(mail?.parsed.text).toContain('- [RESOLVED] veh-0002 is back on the VPN');
    expect(mail?.parsed.text).toContain('…and 1 more');
    expect(mail?.parsed.text).not.toContain('veh-0009');
  });
});
