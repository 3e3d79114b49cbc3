import { describe, expect, it } from 'vitest';
import { type AnswerClass, classifyExchange, type Exchange } from '../../src/lib/http-answer.js';

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
