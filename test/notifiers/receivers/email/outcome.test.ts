import { describe, expect, it } from 'vitest';
import { isPermanentReply, outcomeOfSmtpError } from '../../../../src/notifiers/receivers/email/outcome.js';

const CONTEXT = { server: 'smtp.example.com:587', timeoutMs: 30_000, aborted: false, username: 'fleetwatch' };

/** An error as nodemailer raises it for a reply the server gave to a command. */
function reply(code: number, text: string, command = 'DATA', errorCode = 'EMESSAGE') {
  return Object.assign(new Error(`Message failed: ${code} ${text}`), {
    code: errorCode,
    responseCode: code,
    response: `${code} ${text}`,
    command,
  });
}

describe('SMTP outcomes', () => {
  it('4yz replies are retried, 5yz rejected (503 aside), each with the reply and the command', () => {
    for (const code of [421, 450, 451, 452, 503]) {
      expect(outcomeOfSmtpError(reply(code, 'try later'), CONTEXT)).toEqual({
        kind: 'retry',
        status: code,
        reason: `smtp.example.com:587 answered ${code} try later to DATA`,
      });
    }
    for (const code of [550, 552, 553, 554]) {
      expect(
        outcomeOfSmtpError(reply(code, '5.7.1 refused', 'RCPT TO:<ops@example.com>', 'EENVELOPE'), CONTEXT),
      ).toEqual({
        kind: 'rejected',
        status: code,
        reason: `smtp.example.com:587 answered ${code} 5.7.1 refused to RCPT`,
      });
    }
    expect([421, 503, 550, 554, 250].map(isPermanentReply)).toEqual([false, false, true, true, false]);
  });

  it('authentication: a 5yz is rejected, a 454 (temporary) retried, no AUTH offered rejected', () => {
    expect(
      outcomeOfSmtpError(reply(535, '5.7.8 Authentication failed', 'AUTH PLAIN', 'EAUTH'), CONTEXT),
    ).toEqual({
      kind: 'rejected',
      status: 535,
      reason:
        'authentication as fleetwatch at smtp.example.com:587 failed: 535 5.7.8 Authentication failed; check auth.username and auth.password',
    });
    expect(
      outcomeOfSmtpError(reply(454, '4.7.0 Temporary failure', 'AUTH PLAIN', 'EAUTH'), CONTEXT),
    ).toMatchObject({
      kind: 'retry',
      status: 454,
    });
    const unoffered = Object.assign(new Error('Authentication not supported'), {
      code: 'EAUTH',
      command: 'API',
    });
    expect(outcomeOfSmtpError(unoffered, CONTEXT)).toEqual({
      kind: 'rejected',
      reason:
        'authentication as fleetwatch at smtp.example.com:587 failed: Authentication not supported; check auth.username and auth.password',
    });
  });

  it('no connection, a time-out and a shutdown are retried, saying which', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.25:587'), {
      code: 'ESOCKET',
      originalCode: 'ECONNREFUSED',
      command: 'CONN',
    });
    expect(outcomeOfSmtpError(refused, CONTEXT)).toEqual({
      kind: 'retry',
      reason: 'could not reach smtp.example.com:587: connect ECONNREFUSED 10.0.0.25:587',
    });
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND smtp.example.com'), {
      code: 'EDNS',
      originalCode: 'ENOTFOUND',
    });
    expect(outcomeOfSmtpError(dns, CONTEXT)).toMatchObject({
      kind: 'retry',
      reason: expect.stringContaining('ENOTFOUND'),
    });
    const aborted = Object.assign(new Error('This operation was aborted'), { code: 'EABORT' });
    expect(outcomeOfSmtpError(aborted, CONTEXT)).toEqual({
      kind: 'retry',
      reason: 'no answer from smtp.example.com:587 within 30000 ms',
    });
    expect(outcomeOfSmtpError(aborted, { ...CONTEXT, aborted: true })).toEqual({
      kind: 'retry',
      reason: 'delivery aborted before smtp.example.com:587 accepted the message',
    });
  });

  it('a server reply is quoted on one line and cut', () => {
    const long = reply(550, `${'x'.repeat(500)}\r\n550 more`);
    const outcome = outcomeOfSmtpError(long, CONTEXT);
    expect(outcome.kind).toBe('rejected');
    if (outcome.kind !== 'rejected') return;
    expect(outcome.reason).not.toMatch(/[\r\n]/);
    expect(outcome.reason.length).toBeLessThan(300);
  });
});
