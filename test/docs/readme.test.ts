import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROBOT_COMMAND_WORDS } from '../../src/cli/robot-words.js';
import { CATALOGUE } from '../../src/events/catalogue.js';
import { METRIC_DEFINITIONS } from '../../src/metrics/index.js';
import { ROBOT_OPERATIONS } from '../../src/upstream/operations/robot.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('lists every event type with its catalogued severity', () => {
    for (const entry of CATALOGUE) {
      expect(readme, entry.type).toContain(`| \`${entry.type}\` | ${entry.severity} |`);
    }
  });

  it('lists every robot command with its operation and request', () => {
    const lines = readme.split('\n');
    for (const operation of ROBOT_OPERATIONS) {
      for (const words of ROBOT_COMMAND_WORDS[operation.name]) {
        const command = `| \`fleetwatch ${words.path.join(' ')}`;
        const request = `| \`${operation.id}\` | ${operation.method} \`${operation.path}\` |`;
        const row = lines.find(
          (line) =>
            (line.startsWith(`${command} `) || line.startsWith(`${command}\``)) && line.includes(request),
        );
        expect(row, `${command}: ${request}`).toBeDefined();
      }
    }
  });

  it('lists every metric of the catalogue with its type and labels', () => {
    for (const metric of METRIC_DEFINITIONS) {
      const name = `\`${metric.name}\`${metric.perEntity ? '\\*' : ''}`;
      const labels = metric.labels.length > 0 ? metric.labels.join(', ') : '—';
      expect(readme, metric.name).toContain(`| ${name} | ${metric.type} | ${labels} |`);
    }
  });

  it('shows the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
  });
});
