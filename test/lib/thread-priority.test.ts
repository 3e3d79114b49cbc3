import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { lowerThisThreadPriority } from '../../src/lib/thread-priority.js';

describe('lowerThisThreadPriority', () => {
  it('leaves the priority alone where the nice value belongs to the whole process', () => {
    const before = getPriority();
    expect(lowerThisThreadPriority(10, 'darwin')).toEqual({
      lowered: false,
      reason: 'thread priorities are per process on darwin',
    });
    expect(getPriority()).toBe(before);
  });
});
