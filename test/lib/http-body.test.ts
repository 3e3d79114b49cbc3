import { describe, expect, it } from 'vitest';
import { describeError, excerptOf } from '../../src/lib/http-body.js';

describe('describeError', () => {
  it('names the code once, then the message', () => {
    expect(
      describeError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })),
    ).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(describeError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(
      'ECONNRESET socket hang up',
    );
    expect(describeError('plain')).toBe('plain');
  });
});

describe('excerptOf', () => {
  it('keeps one line of at most the given length', () => {
    expect(excerptOf('a\n\tb\u0000  c')).toBe('a b c');
    expect(excerptOf('x'.repeat(10), 5)).toBe('xxxx…');
  });
});
