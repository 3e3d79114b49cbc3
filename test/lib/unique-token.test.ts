import { describe, expect, it } from 'vitest';
import { uniqueToken } from '../../src/lib/unique-token.js';

describe('uniqueToken', () => {
  it('never repeats within a thread, and carries the thread’s random prefix', () => {
    const tokens = Array.from({ length: 50_000 }, () => uniqueToken());
    expect(new Set(tokens).size).toBe(tokens.length);
    // 8 random bytes in base64url, then the counter.
    const prefix = tokens[0]!.slice(0, 11);
    expect(prefix).toMatch(/^[A-Za-z0-9_-]{11}$/);
    expect(tokens.every((token) => token.startsWith(prefix))).toBe(true);
  });
});
