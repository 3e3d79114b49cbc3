import { z } from 'zod';
import { durationField } from '../../../lib/fields.js';
import { httpUrlSchema } from '../../../lib/http-url.js';
import { REDACTED } from '../../../log/secrets.js';
import { maxHoldSchema, receiverNameSchema } from '../../notifier.js';

/**
 * An Alertmanager receiver in the config file:
 *
 * ```yaml
 * - kind: alertmanager
 *   name: alertmanager
 *   urls:                                  # every peer of the cluster, never a load balancer
 *     - http://alertmanager-0:9093
 *     - http://alertmanager-1:9093
 *   basic_auth: { username: fleetwatch, password: ${AM_PASSWORD} }   # or bearer_token: ${AM_TOKEN}
 *   timeout: 10s
 *   resend_interval: 1m                    # firing alerts pushed again this often
 * ```
 *
 * `urls` are the Alertmanagers' own addresses (with a `--web.route-prefix` path when one is set);
 * fleetwatch posts to `<url>/api/v2/alerts`. Credentials go in `basic_auth` or `bearer_token`,
 * never in the URL, so the URLs can be logged as they are.
 */

export const MAX_PEERS = 10;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_RESEND_INTERVAL_MS = 60_000;
export const MIN_RESEND_INTERVAL_MS = 10_000;
export const MAX_RESEND_INTERVAL_MS = 10 * 60_000;

const PEER_MESSAGE = 'must be an http(s) URL of one Alertmanager, such as http://alertmanager-0:9093';

/** What a peer URL may not carry: credentials (they belong in basic_auth), a query, a fragment. */
function peerProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined; // not a URL at all: httpUrlSchema says so
  }
  if (url.username || url.password) return 'must not hold credentials: use basic_auth or bearer_token';
  if (url.search || url.hash) return 'must not have a query or a fragment (fleetwatch adds /api/v2/alerts)';
  return undefined;
}

const peerUrl = httpUrlSchema.superRefine((value, ctx) => {
  const problem = peerProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** The API path every peer is given, below its own URL (which may carry a route prefix). */
export function alertsUrl(peer: string): string {
  const url = new URL(peer);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/v2/alerts`;
  return url.toString();
}

const secretText = (what: string) =>
  z
    .string({ error: `must be the ${what}, given through an environment variable` })
    .min(1, { error: 'must not be empty' })
    .refine((value) => !/[\r\n\0]/.test(value), { error: 'must not contain line breaks' });

const basicAuthSchema = z
  .object(
    {
      username: z
        .string({ error: 'must be the user name' })
        .min(1, { error: 'must not be empty' })
        .refine((value) => !/[:\r\n\0]/.test(value), { error: 'must not contain ":" or line breaks' }),
      password: secretText('password'),
    },
    { error: 'expected a mapping with username and password' },
  )
  .strict();

export const alertmanagerReceiverSchema = z
  .object({
    kind: z.literal('alertmanager'),
    name: receiverNameSchema,
    max_hold: maxHoldSchema,
    urls: z
      .array(peerUrl, { error: `expected a list of 1 to ${MAX_PEERS} Alertmanager URLs` })
      // Counted here rather than with min()/max(), which zod words for strings too.
      .superRefine((list, ctx) => {
        if (list.length === 0) {
          ctx.addIssue({ code: 'custom', message: `must list at least one Alertmanager (${PEER_MESSAGE})` });
        }
        if (list.length > MAX_PEERS) {
          ctx.addIssue({ code: 'custom', message: `must list at most ${MAX_PEERS} Alertmanagers` });
        }
        const seen = new Set<string>();
        list.forEach((url, index) => {
          if (!URL.canParse(url)) return;
          const target = alertsUrl(url);
          if (seen.has(target))
            ctx.addIssue({ code: 'custom', path: [index], message: 'repeats an earlier URL' });
          seen.add(target);
        });
      }),
    basic_auth: basicAuthSchema.optional(),
    bearer_token: secretText('bearer token').optional(),
    /** One request to one peer: connect, send, answer. */
    timeout: durationField(100, 2 * 60_000).default(DEFAULT_TIMEOUT_MS),
    /**
     * How often every firing alert is pushed again (Prometheus's `--rules.alert.resend-delay`);
     * each push says it ends 4 intervals later unless pushed again.
     */
    resend_interval: durationField(MIN_RESEND_INTERVAL_MS, MAX_RESEND_INTERVAL_MS).default(
      DEFAULT_RESEND_INTERVAL_MS,
    ),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.basic_auth !== undefined && config.bearer_token !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['bearer_token'],
        message: 'cannot be given with basic_auth: choose one',
      });
    }
  });

export type AlertmanagerReceiverConfig = z.output<typeof alertmanagerReceiverSchema>;

/** The `authorization` header value, when the receiver has credentials. */
export function authorization(config: AlertmanagerReceiverConfig): string | undefined {
  if (config.bearer_token !== undefined) return `Bearer ${config.bearer_token}`;
  if (config.basic_auth === undefined) return undefined;
  const { username, password } = config.basic_auth;
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** Every secret of the receiver: the password or token, and the header built from it. */
export function alertmanagerSecrets(config: AlertmanagerReceiverConfig): string[] {
  const header = authorization(config);
  return [
    ...(config.basic_auth ? [config.basic_auth.password] : []),
    ...(config.bearer_token === undefined ? [] : [config.bearer_token]),
    ...(header === undefined ? [] : [header, header.slice(header.indexOf(' ') + 1)]),
  ];
}

/** The receiver as `config check` prints it: the password and the token replaced. */
export function maskAlertmanagerConfig(config: AlertmanagerReceiverConfig): AlertmanagerReceiverConfig {
  return {
    ...config,
    ...(config.basic_auth ? { basic_auth: { ...config.basic_auth, password: REDACTED } } : {}),
    ...(config.bearer_token === undefined ? {} : { bearer_token: REDACTED }),
  };
}
