import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';

/** A pino logger at `level` whose lines the test reads back, parsed, oldest first. */
export function captureJsonLog(level = 'info'): {
  lines: Array<Record<string, unknown>>;
  logger: Logger;
  /** Every line as written, for printing when a test fails. */
  text(): string;
} {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return {
    lines,
    logger: pino({ level }, stream),
    text: () => lines.map((line) => JSON.stringify(line)).join('\n'),
  };
}
