import { describe, expect, it } from 'vitest';
import {
  batchOutcome,
  type PeerAnswer,
  peerOutcome,
  saidBy,
} from '../../../../src/notifiers/receivers/alertmanager/outcome.js';

const NOW = Date.parse('2026-03-04T10:00:00.000Z');
const A = 'http://am-0:9093';
const B = 'http://am-1:9093';

const answer = (peer: string, status: number, body = '', retryAfter?: string): PeerAnswer => ({
  peer,
  status,
  body,
  retryAfter,
});
const down = (peer: string): PeerAnswer => ({
  peer,
  failure: 'network',
  detail: 'network error: ECONNREFUSED',
});

describe("Alertmanager peers' answers", () => {
  it("reads Alertmanager's refusals: a JSON string (400) or {code, message} (422)", () => {
    expect(saidBy('"invalid label set: invalid name \\"bad-name\\""\n')).toBe(
      'invalid label set: invalid name "bad-name"',
    );
    expect(saidBy('{"code":601,"message":"0.generatorURL in body must be of type uri: \\"x\\""}')).toBe(
      '0.generatorURL in body must be of type uri: "x"',
    );
    expect(saidBy('<html>\n  bad gateway\n</html>')).toBe('<html> bad gateway </html>');
    expect(saidBy('x'.repeat(500))).toHaveLength(200);
  });

  it('one peer: 2xx delivered, 400 rejected with its message, 5xx and no answer retried, 429 throttled', () => {
    expect(peerOutcome(answer(A, 200), NOW)).toEqual({ kind: 'delivered', status: 200 });
    expect(peerOutcome(answer(A, 400, '"start time must be before end time"'), NOW)).toEqual({
      kind: 'rejected',
      status: 400,
      reason: 'http://am-0:9093: HTTP 400: start time must be before end time',
    });
    expect(peerOutcome(answer(A, 500, 'boom'), NOW)).toMatchObject({ kind: 'retry', status: 500 });
    expect(peerOutcome(down(A), NOW)).toEqual({
      kind: 'retry',
      reason: 'http://am-0:9093: network error: ECONNREFUSED',
    });
    expect(peerOutcome({ peer: A, failure: 'timeout', detail: '' }, NOW)).toEqual({
      kind: 'retry',
      reason: 'http://am-0:9093: no answer in time',
    });
    expect(peerOutcome(answer(A, 429, '', '30'), NOW)).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterMs: 30_000,
      reason: 'http://am-0:9093: HTTP 429; retry after 30s',
    });
    expect(peerOutcome(answer(A, 429), NOW)).toMatchObject({ kind: 'retry', status: 429 });
    expect(peerOutcome(answer(A, 401), NOW)).toMatchObject({
      kind: 'rejected',
      reason: 'http://am-0:9093: HTTP 401 (check basic_auth or bearer_token)',
    });
    expect(peerOutcome(answer(A, 404), NOW)).toMatchObject({
      kind: 'rejected',
      reason: 'http://am-0:9093: HTTP 404 (no /api/v2/alerts there: check urls)',
    });
    expect(peerOutcome(answer(A, 308), NOW)).toMatchObject({ kind: 'rejected' });
  });

  it('delivered when at least one peer accepted; the others are listed for the log', () => {
    const result = batchOutcome([down(A), answer(B, 200)], NOW);
    expect(result.outcome).toEqual({ kind: 'delivered', status: 200 });
    expect(result.failed).toEqual([{ peer: A, outcome: expect.objectContaining({ kind: 'retry' }) }]);
  });

  it('none accepted: rejected when a peer refused the alerts, else retry, throttled only when every peer asks to wait', () => {
    expect(batchOutcome([down(A), answer(B, 400, '"bad"')], NOW).outcome).toEqual({
      kind: 'rejected',
      status: 400,
      reason:
        'no Alertmanager accepted the alerts: http://am-0:9093: network error: ECONNREFUSED; http://am-1:9093: HTTP 400: bad',
    });
    expect(batchOutcome([down(A), answer(B, 503)], NOW).outcome).toMatchObject({
      kind: 'retry',
      status: 503,
    });
    expect(batchOutcome([down(A), down(B)], NOW).outcome).toMatchObject({ kind: 'retry' });
    expect(batchOutcome([answer(A, 429, '', '60'), answer(B, 503, '', '5')], NOW).outcome).toMatchObject({
      kind: 'throttled',
      retryAfterMs: 5_000,
    });
    expect(batchOutcome([answer(A, 429, '', '60'), down(B)], NOW).outcome).toMatchObject({ kind: 'retry' });
  });
});
