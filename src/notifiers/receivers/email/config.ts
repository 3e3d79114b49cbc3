import { isIP } from 'node:net';
import { z } from 'zod';
import { countField, durationField, shown } from '../../../lib/fields.js';
import { REDACTED } from '../../../log/secrets.js';
import { maxHoldSchema, receiverNameSchema } from '../../notifier.js';

/**
 * An email receiver in the config file: one message per notification, over SMTP.
 *
 * ```yaml
 * - kind: email
 *   name: ops-mail
 *   smarthost: smtp.example.com:587          # or host: + port:
 *   tls: starttls                            # starttls (default), implicit (port 465), none
 *   auth: { username: fleetwatch, password: ${SMTP_PASSWORD} }
 *   from: 'fleetwatch <fleetwatch@example.com>'
 *   to: [ops@example.com, 'On call <oncall@example.com>']
 *   subject: '[fleet]'                       # optional prefix of every subject
 *   timeout: 30s                             # the whole exchange with the server
 *   ca: ${SMTP_CA_PEM}                       # optional: a private CA's certificate(s), PEM
 *   insecure_skip_verify: false              # true: any certificate (never in production)
 *   max_events: 50                           # events listed per message; the rest are counted
 *   max_hold: 5m                             # what every kind has
 * ```
 *
 * `tls: starttls` refuses to send when the server does not offer STARTTLS or the upgrade fails:
 * nothing, the password included, goes over a plain connection unless `tls: none` says so.
 * The password is the secret: registered for scrubbing, `[REDACTED]` in `config check`, never
 * repeated in a problem message.
 */

export const TLS_MODES = ['starttls', 'implicit', 'none'] as const;
export type TlsMode = (typeof TLS_MODES)[number];

/** The port a mode is usually served on (RFC 8314: 587 submission, 465 submissions; 25 relay). */
export const DEFAULT_PORTS: Readonly<Record<TlsMode, number>> = { starttls: 587, implicit: 465, none: 25 };

export const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_RECIPIENTS = 50;
export const MAX_ADDRESS_LENGTH = 320;
export const MAX_SUBJECT_PREFIX = 100;
export const MAX_CA_BYTES = 64 * 1024;
export const DEFAULT_MAX_EVENTS = 50;

const HOSTNAME = z.regexes.hostname;
const EMAIL = z.regexes.email;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
/**
 * `Display Name <address>`, the name optionally quoted; an unquoted name has no `,` or `;`, which
 * would split it into two recipients on the way out.
 */
const NAMED = /^\s*(?:"([^"\\]*)"|([^<>",;]*?))\s*<([^<>\s]+)>\s*$/;

/** A host name or an IP address (IPv6 without brackets). */
function isHost(value: string): boolean {
  return isIP(value) !== 0 || HOSTNAME.test(value);
}

/** The address of a mailbox given as `a@example.com` or `Name <a@example.com>`; undefined if neither. */
export function mailboxAddress(mailbox: string): string | undefined {
  if (CONTROL.test(mailbox)) return undefined;
  const named = NAMED.exec(mailbox);
  const address = named ? named[3] : mailbox.trim();
  return address !== undefined && EMAIL.test(address) ? address : undefined;
}

const MAILBOX_PROBLEM = 'must be an email address such as ops@example.com or "Fleet ops <ops@example.com>"';

const mailbox = z
  .string({ error: MAILBOX_PROBLEM })
  .max(MAX_ADDRESS_LENGTH, { error: `must be at most ${MAX_ADDRESS_LENGTH} characters` })
  .superRefine((value, ctx) => {
    if (mailboxAddress(value) === undefined) {
      ctx.addIssue({ code: 'custom', message: `${MAILBOX_PROBLEM}; got ${shown(value)}` });
    }
  });

/** `host:port` or `[v6 address]:port`, as Alertmanager's `smarthost` is written. */
export function parseSmarthost(value: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(value.trim());
  if (!match) return undefined;
  const host = match[1] ?? match[2] ?? '';
  const port = Number(match[3]);
  if (match[1] !== undefined && isIP(host) !== 6) return undefined;
  if (!isHost(host) || port < 1 || port > 65_535) return undefined;
  return { host, port };
}

const SMARTHOST_PROBLEM = 'must be host:port, such as smtp.example.com:587 or [2001:db8::25]:25';

const PASSWORD_PROBLEM = `must be the SMTP password (1 to 1024 characters), such as \${SMTP_PASSWORD}`;

const authSchema = z
  .object(
    {
      username: z
        .string({ error: 'must be the SMTP user name' })
        .min(1, { error: 'must not be empty' })
        .max(256, { error: 'must be at most 256 characters' })
        .refine((value) => !CONTROL.test(value), {
          error: 'must not contain line breaks or control characters',
        }),
      // The messages never repeat the value: it is a secret, and a config error is printed.
      password: z
        .string({ error: PASSWORD_PROBLEM })
        .min(1, { error: PASSWORD_PROBLEM })
        .max(1024, { error: PASSWORD_PROBLEM })
        .refine((value) => !/[\r\n\0]/.test(value), { error: 'must not contain line breaks' }),
    },
    { error: 'expected a mapping with username and password' },
  )
  .strict();

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

export const emailReceiverSchema = z
  .object({
    kind: z.literal('email'),
    name: receiverNameSchema,
    max_hold: maxHoldSchema,
    /** `host:port`; or `host` and `port` apart (the port then defaults by `tls`). */
    smarthost: z
      .string({ error: SMARTHOST_PROBLEM })
      .refine((value) => parseSmarthost(value) !== undefined, { error: SMARTHOST_PROBLEM })
      .optional(),
    host: z
      .string({ error: 'must be a host name or an IP address' })
      .trim()
      .refine(isHost, { error: 'must be a host name or an IP address, such as smtp.example.com' })
      .optional(),
    port: countField(1, 65_535).optional(),
    tls: z.enum(TLS_MODES, { error: 'expected starttls, implicit or none' }).default('starttls'),
    auth: authSchema.optional(),
    from: mailbox,
    to: z
      .array(mailbox, { error: 'must be a list of email addresses' })
      // Counted here rather than with min()/max(), which zod also applies to a string's length.
      .superRefine((list, ctx) => {
        if (list.length === 0) ctx.addIssue({ code: 'custom', message: 'must list at least one address' });
        if (list.length > MAX_RECIPIENTS) {
          ctx.addIssue({ code: 'custom', message: `must list at most ${MAX_RECIPIENTS} addresses` });
        }
        const seen = new Set<string>();
        list.forEach((item, index) => {
          const address = mailboxAddress(item)?.toLowerCase();
          if (address === undefined) return;
          if (seen.has(address)) {
            ctx.addIssue({ code: 'custom', path: [index], message: 'repeats an earlier address' });
          }
          seen.add(address);
        });
      }),
    /** Put before every subject, such as `[fleet]`. */
    subject: z
      .string({ error: 'must be a text such as [fleet]' })
      .min(1, { error: 'must not be empty' })
      .max(MAX_SUBJECT_PREFIX, { error: `must be at most ${MAX_SUBJECT_PREFIX} characters` })
      .refine((value) => !CONTROL.test(value), {
        error: 'must not contain line breaks or control characters',
      })
      .optional(),
    /** The whole exchange: connect, TLS, authentication, the message, the server's answer. */
    timeout: durationField(1_000, 5 * 60_000).default(DEFAULT_TIMEOUT_MS),
    /** Certificates (PEM) trusted besides the system's: a private CA or the server's own. */
    ca: z
      .string({ error: 'must be PEM text with at least one -----BEGIN CERTIFICATE----- block' })
      .max(MAX_CA_BYTES, { error: `must be at most ${MAX_CA_BYTES / 1024} KiB of PEM` })
      .refine((value) => CERTIFICATE.test(value), {
        error: 'must be PEM text with at least one -----BEGIN CERTIFICATE----- block',
      })
      .optional(),
    insecure_skip_verify: z.boolean({ error: 'expected true or false' }).default(false),
    max_events: countField(1, 500).default(DEFAULT_MAX_EVENTS),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.smarthost === undefined && config.host === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['smarthost'],
        message: 'is required (host:port of the SMTP server), unless host is given',
      });
    }
    if (config.smarthost !== undefined && (config.host !== undefined || config.port !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [config.host !== undefined ? 'host' : 'port'],
        message: 'cannot be given with smarthost (it already names host and port)',
      });
    }
    if (config.tls === 'none') {
      for (const field of ['ca', 'insecure_skip_verify'] as const) {
        if (field === 'ca' ? config.ca !== undefined : config.insecure_skip_verify) {
          ctx.addIssue({ code: 'custom', path: [field], message: 'has no effect with tls: none' });
        }
      }
    }
  });

export type EmailReceiverConfig = z.output<typeof emailReceiverSchema>;

/** Where the server is: `smarthost`, or `host` with `port` (default by `tls`). */
export function serverOf(config: EmailReceiverConfig): { host: string; port: number } {
  const parsed = config.smarthost === undefined ? undefined : parseSmarthost(config.smarthost);
  if (parsed) return parsed;
  return { host: config.host ?? '', port: config.port ?? DEFAULT_PORTS[config.tls] };
}

/** The receiver as `config check` prints it: the password replaced. */
export function maskEmailConfig(config: EmailReceiverConfig): EmailReceiverConfig {
  return config.auth === undefined
    ? { ...config }
    : { ...config, auth: { ...config.auth, password: REDACTED } };
}

/**
 * The password, and the forms it travels in over SMTP (AUTH LOGIN sends it in base64, AUTH PLAIN
 * sends `\0user\0password` in base64), so none of them can reach a log line or a reason.
 */
export function emailSecrets(config: EmailReceiverConfig): string[] {
  if (config.auth === undefined) return [];
  const { username, password } = config.auth;
  return [
    password,
    Buffer.from(password).toString('base64'),
    Buffer.from(`\0${username}\0${password}`).toString('base64'),
  ];
}
