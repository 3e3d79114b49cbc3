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
