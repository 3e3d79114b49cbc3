import { describe, expect, it } from 'vitest';
import {
  outcomeOfAnswer,
  parseRetryAfter,
  slackError,
} from '../../../../src/notifiers/receivers/slack/outcome.js';

const NOW = Date.parse('2026-03-04T10:00:00.000Z');

describe('parseRetryAfter', () => {
  it.each([
    ['7', 7_000],
    ['1.5', 1_500],
    [' 30 ', 30_000],
    ['0', 1_000],
    [null, 1_000],
    ['', 1_000],
    ['soon', 1_000],
    ['-5', 1_000],
    // As asked: the receiver's max_hold cuts it where delivery decides (decision.ts).
    ['99999', 99_999_000],
    ['Wed, 04 Mar 2026 10:00:20 GMT', 20_000],
    ['Wed, 04 Mar 2026 09:00:00 GMT', 1_000],
  ])('%j is %d ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });
});

describe('outcomeOfAnswer', () => {
  const headers = (values: Record<string, string>) => new Headers(values);

  it.each([
    [200, 'ok', 'delivered'],
    [204, '', 'delivered'],
    [400, 'invalid_payload', 'rejected'],
    [400, 'user_not_found', 'rejected'],
    [400, 'invalid_blocks', 'rejected'],
    [403, 'action_prohibited', 'rejected'],
    [404, 'channel_not_found', 'rejected'],
    [410, 'channel_is_archived', 'gone'],
    [404, 'no_service', 'gone'],
    [403, 'invalid_token', 'gone'],
    [403, 'team_disabled', 'gone'],
    [500, 'rollup_error', 'retry'],
    [502, '<html>bad gateway</html>', 'retry'],
    [408, '', 'retry'],
    [301, '', 'rejected'],
    [429, 'rate_limited', 'throttled'],
  ])('%d %s is %s', (status, body, kind) => {
    const outcome = outcomeOfAnswer({ status, body });
    expect(outcome.kind).toBe(kind);
    expect(outcome.status).toBe(status);
    if (outcome.kind !== 'delivered' && /^[a-z_]+$/.test(body)) expect(outcome.reason).toContain(body);
  });

  it('throttles by Retry-After and keeps it on a 5xx', () => {
    expect(
      outcomeOfAnswer({ status: 429, body: 'rate_limited', headers: headers({ 'Retry-After': '12' }) }),
    ).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterMs: 12_000,
      reason: 'Slack answered 429 rate_limited; retry after 12000 ms',
    });
    expect(
      outcomeOfAnswer({ status: 503, body: '', headers: headers({ 'retry-after': '3' }) }),
    ).toMatchObject({
      kind: 'retry',
      retryAfterMs: 3_000,
    });
  });

  it('quotes a body that is not an error word, cut short on one line', () => {
    expect(slackError('  channel_not_found\n')).toBe('channel_not_found');
    expect(slackError('')).toBe('no body');
    expect(slackError(`<html>\n${'x'.repeat(500)}</html>`)).toMatch(/^body "<html> x+…"$/);
  });
});

describe('outcomeOfAnswer for the Slack-compatible services', () => {
  const json = (value: unknown) => JSON.stringify(value);
  const headers = (values: Record<string, string>) => new Headers(values);

  it('reads Discord: JSON words, retry_after in seconds, the header when the body is not JSON', () => {
    expect(outcomeOfAnswer({ status: 200, body: 'ok' }, NOW, 'discord')).toEqual({
      kind: 'delivered',
      status: 200,
    });
    expect(
      outcomeOfAnswer(
        {
          status: 429,
          body: json({ message: 'You are being rate limited.', retry_after: 0.25, global: false }),
          headers: headers({ 'retry-after': '1' }),
        },
        NOW,
        'discord',
      ),
    ).toMatchObject({ kind: 'throttled', retryAfterMs: 1_000 });
    expect(
      outcomeOfAnswer(
        { status: 429, body: json({ message: 'You are being rate limited.', retry_after: 12.5 }) },
        NOW,
        'discord',
      ),
    ).toMatchObject({ kind: 'throttled', retryAfterMs: 12_500 });
    expect(
      outcomeOfAnswer(
        { status: 429, body: '<html>error 1015</html>', headers: headers({ 'retry-after': '30' }) },
        NOW,
        'discord',
      ),
    ).toMatchObject({ kind: 'throttled', retryAfterMs: 30_000 });
    expect(
      outcomeOfAnswer(
        { status: 404, body: json({ message: 'Unknown Channel', code: 10003 }) },
        NOW,
        'discord',
      ),
    ).toEqual({
      kind: 'gone',
      status: 404,
      reason: 'Discord answered 404 10003 Unknown Channel',
    });
    expect(
      outcomeOfAnswer(
        { status: 403, body: json({ message: 'Missing Access', code: 50001 }) },
        NOW,
        'discord',
      ),
    ).toMatchObject({
      kind: 'rejected',
    });
  });

  it('reads Mattermost: the AppError id decides, its limiter is read by Retry-After', () => {
    const error = (status: number, id: string) => ({
      status,
      body: json({ id, message: 'm', status_code: status }),
    });
    expect(
      outcomeOfAnswer(error(400, 'web.incoming_webhook.invalid.app_error'), NOW, 'mattermost').kind,
    ).toBe('gone');
    expect(
      outcomeOfAnswer(error(501, 'web.incoming_webhook.disabled.app_error'), NOW, 'mattermost').kind,
    ).toBe('gone');
    expect(outcomeOfAnswer(error(400, 'web.incoming_webhook.text.app_error'), NOW, 'mattermost').kind).toBe(
      'rejected',
    );
    expect(outcomeOfAnswer(error(500, 'app.post.save.app_error'), NOW, 'mattermost').kind).toBe('retry');
    expect(
      outcomeOfAnswer(
        { status: 429, body: 'limit exceeded\n', headers: headers({ 'retry-after': '4' }) },
        NOW,
        'mattermost',
      ),
    ).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterMs: 4_000,
      reason: 'Mattermost answered 429 body "limit exceeded"; retry after 4000 ms',
    });
  });

  it('reads Rocket.Chat: its error text, a 401 or an unknown integration is gone, X-RateLimit-Reset is the wait', () => {
    const error = (status: number, text: string) => ({ status, body: json({ success: false, error: text }) });
    expect(
      outcomeOfAnswer(error(400, 'Invalid integration id or token provided.'), NOW, 'rocketchat').kind,
    ).toBe('gone');
    expect(outcomeOfAnswer(error(401, 'You must be logged in to do this.'), NOW, 'rocketchat').kind).toBe(
      'gone',
    );
    expect(outcomeOfAnswer(error(400, 'error-invalid-channel'), NOW, 'rocketchat')).toEqual({
      kind: 'rejected',
      status: 400,
      reason: 'Rocket.Chat answered 400 error-invalid-channel',
    });
    expect(
      outcomeOfAnswer(
        {
          ...error(429, 'Error, too many requests. [error-too-many-requests]'),
          headers: headers({ 'x-ratelimit-reset': String(NOW + 42_000) }),
        },
        NOW,
        'rocketchat',
      ),
    ).toMatchObject({ kind: 'throttled', retryAfterMs: 42_000 });
    // A reset already past: the minimum wait.
    expect(
      outcomeOfAnswer(
        { ...error(429, 'x'), headers: headers({ 'x-ratelimit-reset': String(NOW - 5_000) }) },
        NOW,
        'rocketchat',
      ),
    ).toMatchObject({ kind: 'throttled', retryAfterMs: 1_000 });
  });
});
