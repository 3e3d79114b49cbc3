import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseProblems } from '../../../../src/lib/issues.js';
import { REDACTED, SecretRegistry } from '../../../../src/log/secrets.js';
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  maskWebhookConfig,
  webhookReceiverSchema,
  webhookSecrets,
} from '../../../../src/notifiers/receivers/webhook/config.js';
import { webhookNotifierFactory } from '../../../../src/notifiers/receivers/webhook/index.js';
import { capturingLogger, newSecret, webhookConfig } from './helpers.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const VALID = { kind: 'webhook', name: 'ops-bridge', url: 'https://hooks.example.com/in', secrets: [SECRET] };

/** Problems as the config loader would print them, with the path in receivers[i].field[j] form. */
function problems(receiver: Record<string, unknown>, index = 2): string[] {
  const receivers: Record<string, unknown>[] = [VALID, VALID, VALID];
  receivers[index] = receiver;
  const result = parseProblems(z.object({ receivers: z.array(webhookReceiverSchema) }), { receivers });
  return result.ok ? [] : result.problems;
}

describe('webhook receiver config', () => {
  it('fills the defaults: 15 s time-out, the Standard Webhooks retry schedule, max_hold 5m, max_body 1 MiB', () => {
    const config = webhookReceiverSchema.parse(VALID);
    expect(config).toEqual({
      ...VALID,
      timeout: 15_000,
      retry_schedule: [...DEFAULT_RETRY_SCHEDULE_MS],
      max_hold: 300_000,
      max_body: 1_048_576,
    });
    expect(config.retry_schedule).toEqual([
      0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
  });

  it('reads durations and headers', () => {
    const config = webhookReceiverSchema.parse({
      ...VALID,
      timeout: '2.5s',
      retry_schedule: ['0s', '1s', 250],
      headers: { 'X-Tenant': 'acme', authorization: 'Bearer abc.def' },
    });
    expect(config.timeout).toBe(2_500);
    expect(config.retry_schedule).toEqual([0, 1_000, 250]);
    expect(config.headers).toEqual({ 'X-Tenant': 'acme', authorization: 'Bearer abc.def' });
  });

  it('max_hold: a duration from 1s to 24h, named when it is not', () => {
    expect(webhookReceiverSchema.parse({ ...VALID, max_hold: '90s' }).max_hold).toBe(90_000);
    expect(webhookReceiverSchema.parse({ ...VALID, max_hold: '24h' }).max_hold).toBe(86_400_000);
    expect(problems({ ...VALID, max_hold: '500ms' })).toEqual([
      'receivers[2].max_hold: expected a duration between 1s and 1d, like 30s; got 500ms',
    ]);
    expect(problems({ ...VALID, max_hold: '2d' })).toEqual([
      'receivers[2].max_hold: expected a duration between 1s and 1d, like 30s; got 2d',
    ]);
    expect(problems({ ...VALID, max_hold: 'forever' })).toEqual([
      'receivers[2].max_hold: expected a duration between 1s and 1d, like 30s; got forever',
    ]);
  });

  it('names the secret that is wrong, and never repeats it', () => {
    const notBase64 = 'whsec_not base64!!';
    const tooShort = `whsec_${Buffer.alloc(23, 1).toString('base64')}`;
    const tooLong = `whsec_${Buffer.alloc(65, 1).toString('base64')}`;
    const unprefixed = Buffer.alloc(32, 7).toString('base64');
    const unpadded = `whsec_${Buffer.alloc(32, 9).toString('base64').replace(/=+$/, '')}`;
    for (const bad of [notBase64, tooShort, tooLong, unprefixed, unpadded, 42]) {
      const found = problems({ ...VALID, secrets: [SECRET, bad] });
      expect(found).toEqual([
        'receivers[2].secrets[1]: must be a whsec_ secret with 24 to 64 bytes of base64',
      ]);
      if (typeof bad === 'string') expect(found.join('\n')).not.toContain(bad.slice(6, 20));
    }
    expect(problems({ ...VALID, secrets: [newSecret(24)] })).toEqual([]);
    expect(problems({ ...VALID, secrets: [newSecret(64)] })).toEqual([]);
  });

  it('wants one to five distinct secrets, as a list', () => {
    expect(problems({ ...VALID, secrets: [] })).toEqual([
      'receivers[2].secrets: must list at least one whsec_ secret',
    ]);
    expect(problems({ ...VALID, secrets: SECRET })).toEqual([
      'receivers[2].secrets: must be a list of whsec_ secrets',
    ]);
    expect(problems({ ...VALID, secrets: [SECRET, SECRET] })).toEqual([
      'receivers[2].secrets[1]: repeats an earlier secret',
    ]);
    expect(problems({ ...VALID, secrets: Array.from({ length: 6 }, () => newSecret()) })).toEqual([
      'receivers[2].secrets: must list at most 5 secrets (the new and the old ones during a rotation)',
    ]);
    expect(problems({ ...VALID, secrets: undefined })).toEqual([
      'receivers[2].secrets: is required (a list of whsec_ secrets)',
    ]);
  });

  it('refuses headers fleetwatch sets itself, and malformed ones', () => {
    expect(
      problems({
        ...VALID,
        headers: { 'Webhook-Signature': 'x', 'content-type': 'text/plain', 'bad header': 'x', ok: 'a\r\nb' },
      }),
    ).toEqual([
      'receivers[2].headers.ok: must not contain line breaks',
      'receivers[2].headers.Webhook-Signature: is set by fleetwatch (webhook-*, content-type and framing headers cannot be overridden)',
      'receivers[2].headers.content-type: is set by fleetwatch (webhook-*, content-type and framing headers cannot be overridden)',
      'receivers[2].headers.bad header: is not a valid HTTP header name',
    ]);
  });

  it('checks the URL, durations and unknown fields', () => {
    expect(problems({ ...VALID, url: 'ftp://example.com' })).toEqual([
      'receivers[2].url: must be an http(s) URL',
    ]);
    expect(problems({ ...VALID, url: 'not a url' })).toEqual(['receivers[2].url: must be an http(s) URL']);
    expect(problems({ ...VALID, timeout: 'soon' })).toEqual([
      'receivers[2].timeout: expected a duration between 100ms and 5m, like 30s; got soon',
    ]);
    expect(problems({ ...VALID, timeout: '10m' })).toEqual([
      'receivers[2].timeout: expected a duration between 100ms and 5m, like 30s; got 10m',
    ]);
    expect(webhookReceiverSchema.parse({ ...VALID, max_body: '256KiB' }).max_body).toBe(262_144);
    expect(problems({ ...VALID, max_body: '1KiB' })).toEqual([
      expect.stringMatching(/^receivers\[2\]\.max_body: expected a size between 64KiB and 64MiB/),
    ]);
    expect(problems({ ...VALID, max_body: '1GiB' })).toHaveLength(1);
    expect(problems({ ...VALID, retry_schedule: [] })).toEqual([
      'receivers[2].retry_schedule: must list at least one attempt',
    ]);
    expect(problems({ ...VALID, retry_schedule: '5s' })).toEqual([
      'receivers[2].retry_schedule: expected a list of durations such as [0s, 5s, 5m]',
    ]);
    expect(problems({ ...VALID, retry_schedule: Array.from({ length: 51 }, () => '1s') })).toEqual([
      'receivers[2].retry_schedule: must list at most 50 attempts',
    ]);
    expect(problems({ ...VALID, retry_schedule: ['0s', 'often'] })).toEqual([
      'receivers[2].retry_schedule[1]: expected a duration between 0s and 1d, like 30s; got often',
    ]);
    expect(problems({ ...VALID, name: '' })).toEqual(['receivers[2].name: must not be empty']);
    expect(problems({ ...VALID, secret: SECRET })).toEqual([
      'receivers[2]: unknown field "secret"; did you mean "secrets"?',
    ]);
  });
});

describe('masking and secret registration', () => {
  const config = webhookConfig({
    url: 'https://robot:p%40ss-word@hooks.example.com/in?token=tok-123456&tenant=acme',
    secrets: [SECRET, newSecret()],
    headers: { 'x-api-key': 'key-abcdef' },
  });

  it('replaces secrets, header values, URL userinfo and query values', () => {
    const masked = maskWebhookConfig(config);
    expect(masked.secrets).toEqual([REDACTED, REDACTED]);
    expect(masked.headers).toEqual({ 'x-api-key': REDACTED });
    expect(masked.url).toBe(
      'https://%5BREDACTED%5D:%5BREDACTED%5D@hooks.example.com/in?token=[REDACTED]&tenant=[REDACTED]',
    );
    const text = JSON.stringify(masked);
    for (const secret of [...config.secrets, 'p%40ss-word', 'p@ss-word', 'tok-123456', 'key-abcdef']) {
      expect(text).not.toContain(secret);
    }
    expect(
      maskWebhookConfig(webhookConfig({ url: 'https://hooks.example.com/in', secrets: [SECRET] })).url,
    ).toBe('https://hooks.example.com/in');
    expect(webhookNotifierFactory.mask(config)).toEqual(masked);
  });

  it('registers every secret so that log lines and messages are scrubbed', () => {
    const registry = new SecretRegistry();
    for (const secret of webhookSecrets(config)) registry.add(secret);
    expect(webhookNotifierFactory.secrets(config)).toEqual(webhookSecrets(config));
    const leaked = [
      ...config.secrets,
      SECRET.slice('whsec_'.length),
      config.url,
      'p@ss-word',
      'tok-123456',
      'key-abcdef',
    ].join(' | ');
    expect(registry.scrub(leaked)).not.toMatch(/MfKQ|ss-word|tok-1|key-ab/);
  });

  it('is what the factory builds and validates', async () => {
    expect(webhookNotifierFactory.kind).toBe('webhook');
    expect(webhookNotifierFactory.configSchema.safeParse(VALID).success).toBe(true);
    const registry = new SecretRegistry();
    const notifier = webhookNotifierFactory.create(config, {
      logger: capturingLogger().logger,
      secrets: registry,
    });
    expect(notifier.kind).toBe('webhook');
    expect(notifier.name).toBe('ops-bridge');
    expect(registry.scrub(`signing with ${SECRET}`)).toBe(`signing with ${REDACTED}`);
    await notifier.close?.();
  });
});
