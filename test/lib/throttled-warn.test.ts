import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { throttledWarn } from '../../src/lib/redis-connection.js';

describe('throttledWarn', () => {
  it('warns once per period and says how many it held back', () => {
    const warned: unknown[] = [];
    const debugged: unknown[] = [];
    const logger = {
      warn: (fields: unknown) => warned.push(fields),
      debug: (fields: unknown) => debugged.push(fields),
    } as unknown as Logger;
    let now = 0;
    const warn = throttledWarn(logger, 1_000, () => now);
    warn({ err: 'a' }, 'queue error');
    now = 500;
    warn({ err: 'b' }, 'queue error');
    warn({ err: 'c' }, 'queue error');
    now = 1_500;
    warn({ err: 'd' }, 'queue error');
    expect(warned).toEqual([{ err: 'a' }, { err: 'd', repeated: 2 }]);
    expect(debugged).toHaveLength(2);
  });
});
