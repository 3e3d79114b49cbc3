import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { parseProblems } from '../../../../src/lib/issues.js';
import { REDACTED } from '../../../../src/log/secrets.js';
import {
  EMAIL_BACKOFF,
  emailNotifierFactory,
  emailReceiverSchema,
  emailSecrets,
  maskEmailConfig,
  parseSmarthost,
  serverOf,
} from '../../../../src/notifiers/receivers/email/index.js';
import { maskReceivers, receiversSchema } from '../../../../src/notifiers/receivers/kinds.js';

const PASSWORD = 'correct-horse-battery-staple';
const VALID = {
  kind: 'email',
  name: 'ops-mail',
  smarthost: 'smtp.example.com:587',
  auth: { username: 'fleetwatch', password: PASSWORD },
  from: 'fleetwatch <fleetwatch@example.com>',
  to: ['ops@example.com'],
};

/** Problems as the config loader prints them, through the `receivers:` schema every kind shares. */
function problems(receiver: Record<string, unknown>): string[] {
  const result = parseProblems(z.object({ receivers: receiversSchema }), { receivers: [receiver] });
  return result.ok ? [] : result.problems;
}

describe('email receiver config', () => {
  it('fills the defaults: STARTTLS required, 30 s time-out, 50 events, max_hold 5m', () => {
    expect(emailReceiverSchema.parse(VALID)).toEqual({
      ...VALID,
      tls: 'starttls',
      timeout: 30_000,
      insecure_skip_verify: false,
      max_events: 50,
      max_hold: 300_000,
    });
  });

  it('takes the server as smarthost or as host and port, the port defaulting by tls', () => {
    const { smarthost: _, ...rest } = VALID;
    expect(serverOf(emailReceiverSchema.parse(VALID))).toEqual({ host: 'smtp.example.com', port: 587 });
    expect(serverOf(emailReceiverSchema.parse({ ...rest, host: 'mx.example.com' }))).toEqual({
      host: 'mx.example.com',
      port: 587,
    });
    expect(serverOf(emailReceiverSchema.parse({ ...rest, host: 'mx.example.com', tls: 'implicit' }))).toEqual(
      {
        host: 'mx.example.com',
        port: 465,
      },
    );
    expect(serverOf(emailReceiverSchema.parse({ ...rest, host: '10.0.0.25', port: '2525' }))).toEqual({
      host: '10.0.0.25',
      port: 2_525,
    });
    expect(parseSmarthost('[2001:db8::25]:25')).toEqual({ host: '2001:db8::25', port: 25 });
    expect(parseSmarthost('smtp.example.com')).toBeUndefined();
    expect(parseSmarthost('smtp.example.com:70000')).toBeUndefined();
    expect(parseSmarthost('[smtp.example.com]:25')).toBeUndefined();
  });

  it('names the field of each mistake', () => {
    const { smarthost: _, ...noServer } = VALID;
    expect(problems(noServer)).toEqual([
      'receivers[0].smarthost: is required (host:port of the SMTP server), unless host is given',
    ]);
    expect(problems({ ...VALID, smarthost: 'smtp.example.com' })).toEqual([
      'receivers[0].smarthost: must be host:port, such as smtp.example.com:587 or [2001:db8::25]:25',
    ]);
    expect(problems({ ...VALID, port: 25 })).toEqual([
      'receivers[0].port: cannot be given with smarthost (it already names host and port)',
    ]);
    expect(problems({ ...noServer, host: 'smtp example com' })).toEqual([
      'receivers[0].host: must be a host name or an IP address, such as smtp.example.com',
    ]);
    expect(problems({ ...noServer, host: 'smtp.example.com', port: 0 })).toEqual([
      'receivers[0].port: expected a whole number between 1 and 65535; got 0',
    ]);
    expect(problems({ ...VALID, tls: 'ssl' })).toEqual([
      'receivers[0].tls: expected starttls, implicit or none',
    ]);
    expect(problems({ ...VALID, from: 'fleetwatch' })).toEqual([
      'receivers[0].from: must be an email address such as ops@example.com or "Fleet ops <ops@example.com>"; got fleetwatch',
    ]);
    expect(problems({ ...VALID, to: ['ops@example.com', 'oncall@', 'OPS@example.com'] })).toEqual([
      'receivers[0].to[1]: must be an email address such as ops@example.com or "Fleet ops <ops@example.com>"; got oncall@',
      'receivers[0].to[2]: repeats an earlier address',
    ]);
    expect(
      problems({ ...VALID, to: ['Fleet, ops <ops@example.com>', '"Fleet, ops" <ops2@example.com>'] }),
    ).toEqual([
      'receivers[0].to[0]: must be an email address such as ops@example.com or "Fleet ops <ops@example.com>"; got "Fleet, ops <ops@example.com>"',
    ]);
    expect(problems({ ...VALID, to: [] })).toEqual(['receivers[0].to: must list at least one address']);
    const many = Array.from({ length: 51 }, (_, index) => `ops${index}@example.com`);
    expect(problems({ ...VALID, to: many })).toEqual(['receivers[0].to: must list at most 50 addresses']);
    expect(problems({ ...VALID, to: 'ops@example.com' })).toEqual([
      'receivers[0].to: must be a list of email addresses',
    ]);
    expect(problems({ ...VALID, subject: 'fleet\nBcc: everyone@example.com' })).toEqual([
      'receivers[0].subject: must not contain line breaks or control characters',
    ]);
    expect(problems({ ...VALID, timeout: '10m' })).toEqual([
      'receivers[0].timeout: expected a duration between 1s and 5m, like 30s; got 10m',
    ]);
    expect(problems({ ...VALID, max_events: 501 })).toEqual([
      'receivers[0].max_events: expected a whole number between 1 and 500; got 501',
    ]);
    expect(problems({ ...VALID, ca: 'not a certificate' })).toEqual([
      'receivers[0].ca: must be PEM text with at least one -----BEGIN CERTIFICATE----- block',
    ]);
    expect(problems({ ...VALID, tls: 'none', insecure_skip_verify: true })).toEqual([
      'receivers[0].insecure_skip_verify: has no effect with tls: none',
    ]);
    expect(problems({ ...VALID, sender: 'x@example.com' })).toEqual([
      'receivers[0]: unknown field "sender" (expected one of kind, name, max_hold, smarthost, host, port, tls, auth, from, to, subject, timeout, ca, insecure_skip_verify, max_events)',
    ]);
  });

  it('never repeats the password in a problem', () => {
    const longPassword = 'p'.repeat(1_025);
    for (const password of ['', longPassword, 'line\nbreak-secret-value']) {
      const found = problems({ ...VALID, auth: { username: 'fleetwatch', password } }).join('\n');
      expect(found).toMatch(/^receivers\[0\]\.auth\.password: /);
      if (password !== '') expect(found).not.toContain(password.slice(0, 20));
    }
    expect(problems({ ...VALID, auth: { username: 'fleetwatch' } })).toEqual([
      'receivers[0].auth.password: is required (the SMTP password (1 to 1024 characters), such as ${SMTP_PASSWORD})',
    ]);
  });

  it('masks the password for config check and lists its forms as secrets', () => {
    const config = emailReceiverSchema.parse(VALID);
    expect(maskEmailConfig(config).auth).toEqual({ username: 'fleetwatch', password: REDACTED });
    expect(JSON.stringify(maskReceivers([config]))).not.toContain(PASSWORD);
    expect(config.auth?.password).toBe(PASSWORD);
    expect(emailSecrets(config)).toEqual([
      PASSWORD,
      Buffer.from(PASSWORD).toString('base64'),
      Buffer.from(`\0fleetwatch\0${PASSWORD}`).toString('base64'),
    ]);
    const { auth: _, ...noAuth } = VALID;
    expect(emailSecrets(emailReceiverSchema.parse(noAuth))).toEqual([]);
  });

  it('retries with exponential back-off from 5 s to 10 min, 10 attempts', () => {
    const policy = emailNotifierFactory.retryPolicy(emailReceiverSchema.parse(VALID), { random: () => 1 });
    expect(EMAIL_BACKOFF).toEqual({ baseMs: 5_000, capMs: 600_000, attempts: 10 });
    expect(policy.attempts).toBe(10);
    expect([2, 3, 4, 8, 9, 10, 11].map((attempt) => policy.delayBefore(attempt))).toEqual([
      5_000,
      10_000,
      20_000,
      320_000,
      600_000,
      600_000,
      undefined,
    ]);
  });

  it('the README example is a valid receiver', () => {
    const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('<a id="email"></a>'));
    const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const { receivers } = parse(block.replaceAll('${SMTP_PASSWORD}', PASSWORD)) as { receivers: unknown[] };
    expect(receivers).toHaveLength(1);
    expect(problems(receivers[0] as Record<string, unknown>)).toEqual([]);
  });
});
