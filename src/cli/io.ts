import type { Readable, Writable } from 'node:stream';

/**
 * Where a command writes: results to `stdout`, progress, problems and questions to `stderr`; it
 * reads a request body (`--file -`) or the answer to a question from `stdin`.
 */
export interface CliIo {
  /** Asked only when `isTTY`: a command never waits for an answer nobody can give. */
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM so long commands (`--wait`, `simulate`) stop cleanly. */
  signal: AbortSignal;
}

/** Ends every usage error's line: the command line was wrong, and --help says how it goes. */
export const USAGE_HINT = '(add --help for usage)';

/**
 * The problems of a command line a command found itself (beyond what its option parsers check),
 * one line each, worded as commander's usage errors are: `fleetwatch: incidents: --severity: …
 * (add --help for usage)`.
 */
export function writeUsage(io: Pick<CliIo, 'stderr'>, command: string, problems: readonly string[]): void {
  for (const problem of problems) writeLine(io.stderr, `fleetwatch: ${command}: ${problem} ${USAGE_HINT}`);
}

export function writeLine(stream: Writable, text = ''): void {
  stream.write(`${text}\n`);
}

export function writeJson(stream: Writable, value: unknown): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Left-aligned columns with a header row; the plain-text form of every list command. */
export function renderTable(headers: string[], rows: string[][]): string {
  // Loops, not Math.max(...rows): a fleet's list can hold more rows than a call takes arguments.
  const widths = headers.map((header) => header.length);
  for (const row of rows) {
    row.forEach((cell, column) => {
      if (column < widths.length) widths[column] = Math.max(widths[column] ?? 0, cell.length);
    });
  }
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** How a list command prints its items for people. */
export interface ListView<T> {
  headers: string[];
  row(item: T): string[];
  /** The line printed instead of an empty table. */
  empty: string;
  /** Where that line goes; stdout unless the absence is itself worth a warning. */
  emptyTo?: 'stdout' | 'stderr';
  /** A line after the table (a count, a total). */
  footer?(items: readonly T[]): string;
  /** The `--json` form; the items themselves by default. */
  json?(items: readonly T[]): unknown;
}

/** The one way list commands print: a JSON array with `--json`, else a table (or the `empty` line). */
export function printList<T>(
  io: CliIo,
  json: boolean | undefined,
  items: readonly T[],
  view: ListView<T>,
): void {
  if (json) {
    writeJson(io.stdout, view.json ? view.json(items) : items);
  } else if (items.length === 0) {
    writeLine(view.emptyTo === 'stderr' ? io.stderr : io.stdout, view.empty);
  } else {
    writeLine(
      io.stdout,
      renderTable(
        view.headers,
        items.map((item) => view.row(item)),
      ),
    );
    if (view.footer) writeLine(io.stdout, `\n${view.footer(items)}`);
  }
}

/** How a read command prints the one thing it read: `--json` for scripts, else a text for people. */
export interface ReadView<T> {
  json(value: T): unknown;
  text(value: T): string;
}

/** The one way read commands print their result. */
export function printRead<T>(io: CliIo, json: boolean | undefined, value: T, view: ReadView<T>): void {
  if (json) writeJson(io.stdout, view.json(value));
  else writeLine(io.stdout, view.text(value));
}

/** The widest a nested value is shown in a table cell or a `key: value` line before it is cut. */
const NESTED_WIDTH = { cell: 40, line: 100 } as const;

/** A value as one short piece of text: scalars as they are, anything nested as compact JSON, cut. */
function inline(value: unknown, width: number): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = JSON.stringify(value);
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A JSON document whose shape nobody specified (a robot's site, its command queue), for people: a
 * list of objects as a table of their fields, a list of values one per line, an object as `key:
 * value` lines; nested values as compact JSON, cut short (`--json` shows everything). Empty when
 * the document holds nothing (null, `[]`, `{}`).
 */
export function renderDocument(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) {
    if (value.length === 0) return '';
    if (value.every(isRecord)) {
      const headers = [...new Set(value.flatMap((item) => Object.keys(item)))];
      return renderTable(
        headers.map((header) => header.toUpperCase()),
        value.map((item) => headers.map((header) => inline(item[header], NESTED_WIDTH.cell))),
      );
    }
    return value.map((item) => inline(item, NESTED_WIDTH.line)).join('\n');
  }
  if (isRecord(value)) {
    const entries = Object.entries(value);
    const width = entries.reduce((most, [key]) => Math.max(most, key.length), 0);
    return entries
      .map(([key, item]) => `${`${key}:`.padEnd(width + 2)}${inline(item, NESTED_WIDTH.line)}`)
      .join('\n');
  }
  return inline(value, NESTED_WIDTH.line);
}
