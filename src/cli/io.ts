import type { Writable } from 'node:stream';

/** Where a command writes: results to `stdout`, progress and problems to `stderr`. */
export interface CliIo {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM so long commands (`--wait`, `simulate`) stop cleanly. */
  signal: AbortSignal;
}

export function writeLine(stream: Writable, text = ''): void {
  stream.write(`${text}\n`);
}

export function writeJson(stream: Writable, value: unknown): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Left-aligned columns with a header row; the plain-text form of every list command. */
export function renderTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
