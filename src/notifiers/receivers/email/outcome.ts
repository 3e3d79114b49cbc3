import type { DeliveryOutcome } from '../../notifier.js';

/**
 * What an SMTP exchange came to, as a `DeliveryOutcome`. SMTP is not HTTP: the server answers
 * with a three-digit reply code (RFC 5321 §4.2), 2yz done, 4yz "try again later", 5yz "never".
 *
 * | what happened | outcome |
 * |---|---|
 * | 250 after the message | `delivered` (status 250) |
 * | 4yz (421 closing, 450/451/452 mailbox busy, local error, no room), 503 (bad sequence: a new session may do) | `retry`, with the server's text |
 * | 5yz (550 no such mailbox or refused, 552 too large, 553 bad address, 554 refused …) | `rejected`, with the server's text |
 * | authentication refused with a 5yz (535, 534, 530) or not possible (no AUTH offered) | `rejected`: "authentication failed", naming the user; a wrong password does not cure itself, and each dead letter says so until it is fixed (`gone` would disable the receiver on one bad answer of a flaky server) |
 * | authentication refused with a 4yz (454 temporary failure) | `retry` |
 * | STARTTLS not offered or refused, a TLS handshake or certificate failure | `retry`, saying TLS failed and why (a certificate renewed on the server, a relay restarted: it may pass) |
 * | no answer in time, connection refused or reset, DNS | `retry` |
 *
 * The status of a failed outcome is the SMTP reply code when there was one. Reasons quote the
 * server's reply (cut to a line) and never the password: the notifier scrubs them with the
 * registry too.
 */

/** What nodemailer puts on the errors it raises (the parts this mapping reads). */
export interface SmtpErrorLike {
  message?: string;
  code?: string;
  /** The system's or TLS's own code (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`) under nodemailer's. */
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  cause?: unknown;
}

export interface SmtpContext {
  /** `host:port`, for reasons. */
  server: string;
  timeoutMs: number;
  /** The delivery's own signal was aborted (shutdown), not the time-out. */
  aborted: boolean;
  /** The receiver's user name, named when authentication fails. */
  username?: string;
}

/** Longest quote of the server's reply kept in a reason. */
const MAX_REPLY = 200;

/** The server's reply on one line, cut: `550 5.1.1 <ops@example.com>: user unknown`. */
export function replyText(response: string | undefined): string {
  const line = (response ?? '').replace(/\s+/g, ' ').trim();
  return line.length > MAX_REPLY ? `${line.slice(0, MAX_REPLY)}…` : line;
}

/** RFC 5321: 5yz is a permanent failure, except 503 (commands out of sequence: a new session may pass). */
export function isPermanentReply(code: number): boolean {
  return code >= 500 && code < 600 && code !== 503;
}

/** The reply code at the start of a server reply (`250 2.0.0 Ok`), if any. */
export function replyCode(response: string | undefined): number | undefined {
  const match = /^([2-5]\d\d)\b/.exec(response ?? '');
  return match ? Number(match[1]) : undefined;
}

export function outcomeOfSmtpError(error: unknown, context: SmtpContext): DeliveryOutcome {
  const failure = (
    typeof error === 'object' && error !== null ? error : { message: String(error) }
  ) as SmtpErrorLike;
  const code = failure.code ?? '';
  const status = failure.responseCode ?? replyCode(failure.response);
  const said = replyText(failure.response) || replyText(failure.message);
  const { server } = context;

  if (code === 'EAUTH' || code === 'ENOAUTH') {
    const who = context.username === undefined ? '' : ` as ${context.username}`;
    const reason = `authentication${who} at ${server} failed: ${said || 'no reason given'}; check auth.username and auth.password`;
    if (status !== undefined && status >= 400 && status < 500) return { kind: 'retry', status, reason };
    return { kind: 'rejected', ...(status === undefined ? {} : { status }), reason };
  }
  if (code === 'ETLS') {
    const reason =
      failure.command === 'STARTTLS' || status !== undefined
        ? `${server} did not start TLS (tls: starttls refuses to send in clear): ${said}`
        : `TLS with ${server} failed: ${tlsDetail(failure)}`;
    return { kind: 'retry', ...(status === undefined ? {} : { status }), reason };
  }
  if (code === 'EABORT') {
    return context.aborted
      ? { kind: 'retry', reason: `delivery aborted before ${server} accepted the message` }
      : { kind: 'retry', reason: `no answer from ${server} within ${context.timeoutMs} ms` };
  }
  if (code === 'ETIMEDOUT') {
    return { kind: 'retry', reason: `no answer from ${server} within ${context.timeoutMs} ms (${said})` };
  }
  if (status !== undefined) {
    const command = failure.command ? ` to ${failure.command.split(/[\s:]/)[0]}` : '';
    const reason = `${server} answered ${said}${command}`;
    return { kind: isPermanentReply(status) ? 'rejected' : 'retry', status, reason };
  }
  if (isCertificateError(failure))
    return { kind: 'retry', reason: `TLS with ${server} failed: ${tlsDetail(failure)}` };
  return { kind: 'retry', reason: `could not reach ${server}: ${networkDetail(failure)}` };
}

/** Node's certificate errors (`DEPTH_ZERO_SELF_SIGNED_CERT`, `CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID` …). */
function isCertificateError(error: SmtpErrorLike): boolean {
  return /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS|ERR_SSL/.test(error.originalCode ?? '');
}

function tlsDetail(error: SmtpErrorLike): string {
  const text = replyText(error.message) || 'handshake failed';
  return isCertificateError(error) ? `${text} (${error.originalCode}); trust the server's CA with ca` : text;
}

function networkDetail(error: SmtpErrorLike): string {
  const text = replyText(error.message) || 'connection failed';
  const code = error.originalCode ?? error.code;
  return code && !text.includes(code) ? `${text} (${code})` : text;
}
