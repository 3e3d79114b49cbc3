import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/events/catalogue.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('lists every event type with its catalogued severity', () => {
    for (const entry of CATALOGUE) {
      expect(readme, entry.type).toContain(`| \`${entry.type}\` | ${entry.severity} |`);
    }
  });

  it('shows the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
  });
});
