import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LINES_LUA, packLines, runScript } from '../../src/store/scripts.js';
import { suiteConnection, uniquePrefix } from '../support/redis.js';

// The script answers with every line `lines` gave it, in order: what packLines packed must come
// back one for one, empty lines and the last one included.
const ECHO = {
  name: 'fleetwatchTestEchoLines',
  lua: `${LINES_LUA}
local out = {}
for line in lines(ARGV[1]) do out[#out + 1] = line end
return out
`,
};

describe('lines packed into one script argument', () => {
  const prefix = uniquePrefix('lines');
  const redis = suiteConnection(prefix);
  const echo = async (lines: readonly string[]): Promise<string[]> =>
    (await runScript(redis, ECHO, [`{${prefix}}:k`], [packLines(lines)])) as string[];

  it('gives back each line as packed, empty ones included', async () => {
    expect(packLines([])).toBe('');
    expect(await echo([])).toEqual([]);
    expect(await echo(['a'])).toEqual(['a']);
    expect(await echo(['', ''])).toEqual(['', '']);
    expect(await echo(['key', '2026-03-01T10:00:00.000Z', '', ''])).toEqual([
      'key',
      '2026-03-01T10:00:00.000Z',
      '',
      '',
    ]);
  });

  it('keeps any lines without a line break, one for one', async () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 12 }).map((text) => text.replaceAll('\n', ''));
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 30 }), async (lines) => {
        expect(await echo(lines)).toEqual(lines);
      }),
      { numRuns: 200 },
    );
  });
});
