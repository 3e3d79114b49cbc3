import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { colorAllowed, createLogger } from '../../src/log/logger.js';
import { SecretRegistry } from '../../src/log/secrets.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination: Object.assign(destination, { write: destination.write.bind(destination) }) };
}

describe('logger', () => {
  it('redacts secret fields by name at any depth', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination, secrets: new SecretRegistry() });
    logger.info(
      {
        client_secret: 'abc123456',
        request: { headers: { authorization: 'Bearer xyz987654' } },
        token: 'tok-1234567',
      },
      'call',
    );
    const text = lines.join('');
    expect(text).not.toContain('abc123456');
    expect(text).not.toContain('xyz987654');
    expect(text).not.toContain('tok-1234567');
    expect(text).toContain('[REDACTED]');
  });

  it('scrubs registered secrets wherever they appear, including messages and errors', () => {
    const { lines, destination } = capture();
    const registry = new SecretRegistry();
    registry.add('https://hooks.slack.com/services/T000/B000/XXXXXXXX');
    registry.add('eyJhbGciOi.token.value');
    const logger = createLogger({ destination, secrets: registry });
    logger.error(
      { err: new Error('POST https://hooks.slack.com/services/T000/B000/XXXXXXXX failed') },
      'delivery with eyJhbGciOi.token.value failed',
    );
    const text = lines.join('');
    expect(text).not.toContain('XXXXXXXX');
    expect(text).not.toContain('eyJhbGciOi.token.value');
    expect(text.match(/\[REDACTED\]/g)?.length).toBeGreaterThanOrEqual(2);
  });

  it('writes JSON lines by default when not on a terminal', () => {
    const { lines, destination } = capture();
    createLogger({ destination, format: 'json', secrets: new SecretRegistry() }).warn(
      { vehicleId: 'v-1' },
      'hello',
    );
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      level: 40,
      msg: 'hello',
      vehicleId: 'v-1',
      name: 'fleetwatch',
    });
  });
});

describe('pretty logs and NO_COLOR', () => {
  /** A destination that says it is a terminal, as standard error is when the daemon runs in one. */
  function terminal() {
    const captured = capture();
    return { ...captured, destination: Object.assign(captured.destination, { isTTY: true }) };
  }
  const ESCAPE = String.fromCharCode(27);

  it('colours pretty lines on a terminal', () => {
    const { lines, destination } = terminal();
    createLogger({ destination, format: 'pretty', env: {}, secrets: new SecretRegistry() }).warn('hello');
    expect(lines.join('')).toContain('hello');
    expect(lines.join('')).toContain(`${ESCAPE}[`);
  });

  it('writes them without colour when NO_COLOR is set, also in auto format', () => {
    for (const format of ['pretty', 'auto'] as const) {
      const { lines, destination } = terminal();
      createLogger({ destination, format, env: { NO_COLOR: '1' }, secrets: new SecretRegistry() }).warn(
        'hello',
      );
      const text = lines.join('');
      expect(text).toMatch(/WARN.*hello/);
      expect(text).not.toContain(ESCAPE);
    }
  });

  it('ignores an empty NO_COLOR, as no-color.org says', () => {
    expect(colorAllowed({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorAllowed({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorAllowed({ isTTY: false }, {})).toBe(false);
  });
});

describe('SecretRegistry', () => {
  it('ignores values too short to be secrets and escapes regex characters', () => {
    const registry = new SecretRegistry();
    registry.add('abc');
    registry.add('a+b(c)*d');
    expect(registry.scrub('abc a+b(c)*d')).toBe('abc [REDACTED]');
  });
});
