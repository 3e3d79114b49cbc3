import { errors, request } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  type AnswerClass,
  classifyExchange,
  describeError,
  type Exchange,
  exchangeOfError,
} from '../../src/lib/http-answer.js';

describe('classifyExchange', () => {
  it.each([
    [200, 'success'],
    [204, 'success'],
    [299, 'success'],
    [301, 'redirect'],
    [308, 'redirect'],
    [401, 'auth'],
    [403, 'auth'],
    [404, 'not_found'],
    [408, 'timeout'],
    ['timeout', 'timeout'],
    [410, 'gone'],
    [429, 'throttled'],
    [502, 'gateway'],
    [503, 'gateway'],
    [504, 'gateway'],
    [500, 'server_error'],
    [501, 'server_error'],
    [599, 'server_error'],
    [600, 'server_error'],
    [400, 'client_error'],
    [409, 'client_error'],
    [422, 'client_error'],
    [499, 'client_error'],
    ['network', 'network'],
    [100, 'informational'],
  ] as Array<[Exchange, AnswerClass]>)('%j is %s', (exchange, kind) => {
    expect(classifyExchange(exchange)).toBe(kind);
  });
});

describe('exchangeOfError', () => {
  it("time-outs (undici's, AbortSignal.timeout) are timeout; anything else is network", async () => {
    expect(exchangeOfError(new errors.HeadersTimeoutError())).toBe('timeout');
    expect(exchangeOfError(new errors.ConnectTimeoutError())).toBe('timeout');
    expect(exchangeOfError(new errors.BodyTimeoutError())).toBe('timeout');
    expect(exchangeOfError(new DOMException('late', 'TimeoutError'))).toBe('timeout');
    // A real refusal: nothing listens on port 1 of loopback.
    const refused = await request('http://127.0.0.1:1/').catch((error: unknown) => error);
    expect(exchangeOfError(refused)).toBe('network');
    expect(exchangeOfError(undefined)).toBe('network');
  });
});

describe('describeError', () => {
  it('says the code, then the message, once', () => {
    expect(
      describeError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })),
    ).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(describeError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(
      'ECONNRESET socket hang up',
    );
    expect(describeError('plain')).toBe('plain');
  });
});
