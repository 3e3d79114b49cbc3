import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseProblems } from '../../../../src/lib/issues.js';
import { REDACTED, SecretRegistry } from '../../../../src/log/secrets.js';
import { authorization } from '../../../../src/notifiers/receivers/alertmanager/config.js';
import {
  alertmanagerNotifierFactory,
  alertmanagerReceiverSchema,
  alertsUrl,
} from '../../../../src/notifiers/receivers/alertmanager/index.js';
import {
  maskReceivers,
  receiverSecrets,
  receiversSchema,
} from '../../../../src/notifiers/receivers/kinds.js';

const VALID = { kind: 'alertmanager', name: 'am', urls: ['http://alertmanager-0:9093'] };

/** Problems as `config check` prints them: through the `receivers:` schema every kind goes through. */
function problems(receiver: Record<string, unknown>): string[] {
  const result = parseProblems(z.object({ receivers: receiversSchema }), { receivers: [receiver] });
  return result.ok ? [] : result.problems;
}

describe('alertmanager receiver config', () => {
  it('fills the defaults: 10 s time-out, resend_interval 1m, max_hold 5m', () => {
    expect(alertmanagerReceiverSchema.parse(VALID)).toEqual({
      ...VALID,
      timeout: 10_000,
      resend_interval: 60_000,
      max_hold: 300_000,
    });
  });

  it('is a kind of the receivers: list', () => {
    const result = parseProblems(z.object({ receivers: receiversSchema }), {
      receivers: [{ ...VALID, resend_interval: '30s', timeout: '2s' }],
    });
    expect(result.ok && result.data.receivers[0]).toMatchObject({
      kind: 'alertmanager',
      resend_interval: 30_000,
    });
  });

  it('posts to <url>/api/v2/alerts, below a route prefix when there is one', () => {
    expect(alertsUrl('http://am:9093')).toBe('http://am:9093/api/v2/alerts');
    expect(alertsUrl('http://am:9093/')).toBe('http://am:9093/api/v2/alerts');
    expect(alertsUrl('https://ops.example.com/alertmanager/')).toBe(
      'https://ops.example.com/alertmanager/api/v2/alerts',
    );
  });

  it('urls: 1 to 10 http(s) peers, no credentials, no query, no repeats', () => {
    expect(problems({ ...VALID, urls: [] })).toEqual([
      'receivers[0].urls: must list at least one Alertmanager (must be an http(s) URL of one Alertmanager, such as http://alertmanager-0:9093)',
    ]);
    expect(problems({ ...VALID, urls: Array.from({ length: 11 }, (_, i) => `http://am-${i}:9093`) })).toEqual(
      ['receivers[0].urls: must list at most 10 Alertmanagers'],
    );
    expect(problems({ ...VALID, urls: 'http://am:9093' })).toEqual([
      'receivers[0].urls: expected a list of 1 to 10 Alertmanager URLs',
    ]);
    expect(problems({ ...VALID, urls: ['ftp://am:9093'] })).toEqual([
      'receivers[0].urls[0]: must be an http(s) URL',
    ]);
    expect(problems({ ...VALID, urls: ['http://am:9093', 'http://user:pw@am-1:9093'] })).toEqual([
      'receivers[0].urls[1]: must not hold credentials: use basic_auth or bearer_token',
    ]);
    expect(problems({ ...VALID, urls: ['http://am:9093?x=1'] })).toEqual([
      'receivers[0].urls[0]: must not have a query or a fragment (fleetwatch adds /api/v2/alerts)',
    ]);
    expect(problems({ ...VALID, urls: ['http://am:9093', 'http://am:9093/'] })).toEqual([
      'receivers[0].urls[1]: repeats an earlier URL',
    ]);
    expect(problems({ kind: 'alertmanager', name: 'am' })).toEqual([
      'receivers[0].urls: is required (a list of 1 to 10 Alertmanager URLs)',
    ]);
  });

  it('resend_interval from 10s to 10m and timeout from 100ms to 2m, named when out of range', () => {
    expect(problems({ ...VALID, resend_interval: '1s' })).toEqual([
      'receivers[0].resend_interval: expected a duration between 10s and 10m, like 30s; got 1s',
    ]);
    expect(problems({ ...VALID, resend_interval: '1h' })).toEqual([
      'receivers[0].resend_interval: expected a duration between 10s and 10m, like 30s; got 1h',
    ]);
    expect(problems({ ...VALID, timeout: '5m' })).toEqual([
      'receivers[0].timeout: expected a duration between 100ms and 2m, like 30s; got 5m',
    ]);
  });

  it('basic_auth or bearer_token, not both; unknown fields refused', () => {
    expect(problems({ ...VALID, basic_auth: { username: 'fw', password: 's3cret-pass' } })).toEqual([]);
    expect(problems({ ...VALID, basic_auth: { username: 'fw' } })).toEqual([
      'receivers[0].basic_auth.password: is required (the password, given through an environment variable)',
    ]);
    expect(problems({ ...VALID, basic_auth: 'fw:pw' })).toEqual([
      'receivers[0].basic_auth: expected a mapping with username and password',
    ]);
    expect(problems({ ...VALID, basic_auth: { username: 'a:b', password: 'pw' } })).toEqual([
      'receivers[0].basic_auth.username: must not contain ":" or line breaks',
    ]);
    expect(
      problems({
        ...VALID,
        basic_auth: { username: 'fw', password: 'pw-123456' },
        bearer_token: 'tok-123456',
      }),
    ).toEqual(['receivers[0].bearer_token: cannot be given with basic_auth: choose one']);
    expect(problems({ ...VALID, url: 'http://am:9093' })).toEqual([expect.stringContaining('receivers[0]')]);
    expect(problems({ ...VALID, url: 'http://am:9093' })[0]).toContain('url');
  });

  it('masks the password and the token; registers them (and the header built from them) as secrets', () => {
    const basic = alertmanagerReceiverSchema.parse({
      ...VALID,
      basic_auth: { username: 'fleetwatch', password: 'correct-horse' },
    });
    const bearer = alertmanagerReceiverSchema.parse({ ...VALID, bearer_token: 'tok-abcdef-123' });
    const [maskedBasic, maskedBearer] = maskReceivers([basic, bearer]);
    expect(maskedBasic).toMatchObject({ basic_auth: { username: 'fleetwatch', password: REDACTED } });
    expect(maskedBearer).toMatchObject({ bearer_token: REDACTED });
    expect(JSON.stringify([maskedBasic, maskedBearer])).not.toMatch(/correct-horse|tok-abcdef-123/);

    const found = receiverSecrets([basic, bearer]);
    const registry = new SecretRegistry();
    for (const secret of found) registry.add(secret);
    const header = Buffer.from('fleetwatch:correct-horse').toString('base64');
    // The whole authorization header is a secret too, scheme and all.
    expect(registry.scrub(`pw correct-horse, Basic ${header}, Bearer tok-abcdef-123, ${header}`)).toBe(
      `pw ${REDACTED}, ${REDACTED}, ${REDACTED}, ${REDACTED}`,
    );
  });

  it('sends basic_auth or the bearer token as the authorization header', () => {
    const basic = alertmanagerReceiverSchema.parse({
      ...VALID,
      basic_auth: { username: 'fw', password: 'pä:ss' },
    });
    expect(authorization(basic)).toBe(`Basic ${Buffer.from('fw:pä:ss', 'utf8').toString('base64')}`);
    expect(authorization(alertmanagerReceiverSchema.parse({ ...VALID, bearer_token: 'tok-1' }))).toBe(
      'Bearer tok-1',
    );
    expect(authorization(alertmanagerReceiverSchema.parse(VALID))).toBeUndefined();
  });

  it('refuses to build a notifier without Redis, saying why', () => {
    const config = alertmanagerReceiverSchema.parse(VALID);
    expect(() =>
      alertmanagerNotifierFactory.create(config, {
        logger: pino({ level: 'silent' }),
        secrets: new SecretRegistry(),
      }),
    ).toThrow('receiver am: an alertmanager receiver keeps its alerts in Redis, and none was given');
  });
});
