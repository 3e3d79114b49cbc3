import { readFile, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { type Command, Option } from 'commander';
import { formatSize } from '../lib/size.js';
import {
  checkOperationBody,
  OPERATION_BODY_MAX_BYTES,
  parseOperationBody,
  tooLarge,
} from '../operations/operation-body.js';
import {
  hasBodyParams,
  type Operation,
  type OperationParam,
  paramsOf,
  pathOf,
  resourceSubject,
} from '../upstream/operations/types.js';
import type { CliContext } from './context.js';
import { CommandError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { type CliIo, renderDocument, writeJson, writeLine } from './io.js';
import { type Asks, type CommandWords, ROBOT_COMMAND_GROUPS } from './robot-words.js';

/**
 * The one builder of robot commands: a row of the operation table and its words (robot-words.ts)
 * become a commander command. Arguments are the device id and the path parameters; options are
 * the query and body parameters, `--file` for a body the caller writes, `--json`, and `--yes` for
 * a command that asks. Before anything is sent, a body is read (bounded), checked against the
 * row's request schema where it has one, and a destructive command is confirmed. A write is sent
 * once: the client never retries a `retry: 'never'` row, and nothing here tries again.
 */

export const DEVICE_ID_HELP = 'device id as listed by `fleetwatch robots`';

/** The command at `path` below `root`; groups that do not exist yet are made, with their help line. */
export function commandAt(root: Command, path: readonly string[]): Command {
  let command = root;
  path.forEach((word, index) => {
    const found = command.commands.find((sub) => sub.name() === word);
    command =
      found ??
      command.command(word).description(ROBOT_COMMAND_GROUPS[path.slice(0, index + 1).join(' ')] ?? '');
  });
  return command;
}

/** Whether the command asks before it sends: as its words say, else as the row's `destructive` says. */
export function asksOf(operation: Operation, words: CommandWords): Asks {
  return words.asks ?? (operation.destructive ? 'always' : 'never');
}

/** Reads send GET; everything else changes something on the robot. */
export function isWrite(operation: Operation): boolean {
  return operation.method !== 'GET';
}

/** Whether the caller writes the body (`--file`): the row takes one, not made of parameters or fixed by the words. */
function takesFile(operation: Operation, words: CommandWords): boolean {
  return operation.body !== 'none' && !hasBodyParams(operation) && words.body === undefined;
}

const kebab = (name: string) => name.replaceAll('_', '-');

/** `Send a set of GPS waypoints` → `send a set of GPS waypoints`, as every command's help line reads. */
const lowerFirst = (text: string) => text.replace(/^[A-Z](?=[a-z])/, (first) => first.toLowerCase());

/** An option for a query or body parameter: `--force`, `--to <user>`. */
function optionOf(param: OperationParam, words: CommandWords): Option {
  const value = words.values?.[param.name] ?? param.name;
  const flags = param.type === 'boolean' ? `--${kebab(param.name)}` : `--${kebab(param.name)} <${value}>`;
  const option = new Option(
    flags,
    param.description.replace(/^./, (first) => first.toLowerCase()),
  );
  if (param.required) option.makeOptionMandatory();
  return option;
}

/**
 * The lines under `--help`: what is sent (with the spec's summary when the description is worded
 * otherwise), how the body is read and checked, retries, confirmation.
 */
export function operationHelp(operation: Operation, words: CommandWords): string {
  const summary = words.handwritten ? `: ${lowerFirst(operation.summary)}` : '';
  const lines = [`Sends ${operation.method} ${pathOf(operation)} (${operation.id})${summary}.`];
  if (words.body !== undefined) {
    const flags = (words.flags ?? []).map(
      (flag) => `; ${flag.field} ${JSON.stringify(flag.on)} with ${flag.flag}`,
    );
    const off = Object.fromEntries((words.flags ?? []).map((flag) => [flag.field, flag.off]));
    lines.push(`Body: ${JSON.stringify({ ...words.body, ...off })}${flags.join('')}.`);
  }
  if (takesFile(operation, words)) {
    const need = operation.body === 'required' ? 'required' : 'optional';
    lines.push(
      `Body (${need}): JSON from --file <path>, or --file - for stdin; at most ${formatSize(OPERATION_BODY_MAX_BYTES)}.`,
    );
  }
  if (operation.body !== 'none') {
    lines.push(
      operation.request
        ? 'The body is checked against the spec before anything is sent (a mismatch: exit 2, nothing sent).'
        : 'The spec gives no shape for the body: it is sent as given, and the robot judges it.',
    );
  }
  lines.push(
    isWrite(operation)
      ? 'A write: sent once, never retried (whether a second one would act twice is not specified).'
      : 'A read: retried on 502/503/504 and time-outs.',
  );
  const asks = asksOf(operation, words);
  if (asks !== 'never') {
    const when = asks === 'with --force' ? 'With --force it asks' : 'Asks';
    lines.push(
      `${when} for confirmation (y/N) on a terminal; --yes skips the question. Without a terminal it is refused (exit 2) unless --yes is given.`,
    );
  } else if (isWrite(operation)) {
    lines.push('Never asks for confirmation; --yes is accepted all the same.');
  }
  if (words.note) lines.push(words.note);
  lines.push(
    'Exit status: 0 done, 1 failed (try later), 2 bad input (nothing sent) or refused as invalid (422),',
    '3 credentials or token rejected, 4 not found or not granted, 6 forbidden for this client, 130 interrupted.',
  );
  return `\n${lines.join('\n')}`;
}

/** `site "north" on robot "rb-0001"`, or `robot "rb-0001"`: what a command addresses, for its messages. */
function subjectOf(operation: Operation, values: ReadonlyMap<string, unknown>): string {
  return resourceSubject(operation, `robot "${String(values.get('deviceId'))}"`, values.get('name'));
}

/** Fills `{param}` of a words template with the call's values. */
function fill(template: string, values: ReadonlyMap<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) =>
    values.has(key) ? String(values.get(key)) : whole,
  );
}

/** The part of an answer worth showing people: the envelope's `data`, else the body without its status words. */
function contentOf(answer: unknown): unknown {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return answer;
  const record = answer as Record<string, unknown>;
  if ('data' in record) return record.data;
  const { status: _status, message: _message, ...rest } = record;
  return rest;
}

/** Adds the command of `words` for `operation` below `root` (the program). */
export function addRobotCommand(
  root: Command,
  context: CliContext,
  operation: Operation,
  words: CommandWords,
): Command {
  const parentPath = words.path.slice(0, -1);
  const name = words.path[words.path.length - 1] ?? '';
  const command = commandAt(root, parentPath).command(name).description(lowerFirst(operation.summary));
  const params = paramsOf(operation);
  const positional = params.filter((param) => param.in === 'path');
  for (const param of positional) {
    command.argument(`<${param.name}>`, param.name === 'deviceId' ? DEVICE_ID_HELP : param.description);
  }
  const options = params
    .filter((param) => param.in !== 'path')
    .map((param) => ({ param, option: optionOf(param, words) }));
  for (const { option } of options) command.addOption(option);
  for (const flag of words.flags ?? []) command.option(flag.flag, flag.help);
  const file = takesFile(operation, words);
  if (file) {
    const option = new Option(
      '--file <path>',
      `the JSON body, from this file or - for stdin (at most ${formatSize(OPERATION_BODY_MAX_BYTES)})`,
    );
    if (operation.body === 'required') option.makeOptionMandatory();
    command.addOption(option);
  }
  const asks = asksOf(operation, words);
  if (asks !== 'never') command.option('--yes', 'send without asking for confirmation');
  // Accepted on every write, so a script can pass --yes to each write without knowing which ask.
  else if (isWrite(operation))
    command.option('--yes', 'accepted, and changes nothing: this command never asks');
  command.option(
    '--json',
    isWrite(operation) ? "print the robot's answer as JSON" : 'print the answer as JSON',
  );
  command.addHelpText('after', operationHelp(operation, words));

  return command.action(async (...given: unknown[]) => {
    const self = given[given.length - 1] as Command;
    const opts = self.optsWithGlobals<Record<string, unknown>>();
    const values = new Map<string, unknown>();
    positional.forEach((param, index) => {
      values.set(param.name, given[index]);
    });
    for (const { param, option } of options) {
      const value = opts[option.attributeName()];
      if (value !== undefined && value !== false) values.set(param.name, value);
    }

    let body: unknown;
    let source = 'the request body';
    const fromFile = typeof opts.file === 'string' ? opts.file : undefined;
    if (words.body !== undefined) {
      body = { ...words.body };
      for (const flag of words.flags ?? []) {
        (body as Record<string, unknown>)[flag.field] = opts[new Option(flag.flag).attributeName()]
          ? flag.on
          : flag.off;
      }
    } else if (hasBodyParams(operation)) {
      const fields = operation.params.filter((param) => param.in === 'body' && values.has(param.name));
      body = Object.fromEntries(fields.map((param) => [param.name, values.get(param.name)]));
    } else if (file && fromFile !== undefined) {
      source = `--file ${fromFile}`;
      body = await readBody(context.io, fromFile, source);
    }
    const checked = checkOperationBody(operation, body);
    if (!checked.ok) {
      throw new CommandError(`${source}: ${checked.problems.join('; ')} (nothing sent)`, ExitCode.usage);
    }

    const subject = subjectOf(operation, values);
    const needed = asks === 'always' || (asks === 'with --force' && values.get('force') === true);
    if (needed && opts.yes !== true) {
      await confirm(context.io, `${words.path.join(' ')} (${subject})`, words.note, fromFile === '-');
    }

    const args = params.map((param) => values.get(param.name));
    if (operation.body !== 'none' && !hasBodyParams(operation)) args.push(body);
    args.push({ signal: context.io.signal });
    // Each method's type is its row's; this one builder serves every row, so it calls by name.
    const client = context.upstream().robots as unknown as Record<
      string,
      (...args: unknown[]) => Promise<unknown>
    >;
    const answer = await client[operation.name]?.(...args);

    const { io } = context;
    if (opts.json === true) return writeJson(io.stdout, answer ?? null);
    const deviceId = String(values.get('deviceId'));
    const shown = renderDocument(contentOf(answer));
    if (!isWrite(operation)) {
      writeLine(io.stdout, shown === '' ? `${deviceId}: ${words.none ?? 'nothing'}` : shown);
      return;
    }
    writeLine(io.stdout, `${deviceId}: ${fill(words.did ?? operation.summary, values)}`);
    if (words.showsAnswer && shown !== '') writeLine(io.stdout, shown);
  });
}

/**
 * Asks on stderr and reads the answer from stdin; anything but `y`/`yes` keeps the command from
 * being sent. Without a terminal to ask on (or with stdin already holding the body) nobody can
 * answer, so the command is refused and `--yes` is named.
 */
async function confirm(
  io: CliIo,
  what: string,
  why: string | undefined,
  stdinIsBody: boolean,
): Promise<void> {
  if (io.stdin.isTTY !== true || stdinIsBody) {
    const reason = stdinIsBody ? 'stdin holds the body' : 'stdin is not a terminal';
    throw new CommandError(
      `${what} not sent: it asks for confirmation and ${reason}; add --yes to send it`,
      ExitCode.usage,
    );
  }
  io.stderr.write(`fleetwatch: ${what}${why ? `: ${why}` : ':'} Send it? [y/N] `);
  const answer = await readLine(io.stdin, io.signal);
  if (!/^\s*y(es)?\s*$/i.test(answer)) {
    throw new CommandError(`${what} not sent: not confirmed`, ExitCode.usage);
  }
}

/** The first line typed on `stream` (without its newline); what came before the end when there is none. */
function readLine(stream: Readable, signal: AbortSignal): Promise<string> {
  let text = '';
  return consume(
    stream,
    signal,
    (chunk) => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      return newline >= 0 ? text.slice(0, newline) : undefined;
    },
    () => text,
  );
}

/**
 * Reads `stream` chunk by chunk until `take` returns a result, the stream ends (`atEnd`), fails,
 * or `signal` aborts; then stops listening and pauses it, so the rest stays unread.
 */
function consume<T>(
  stream: Readable,
  signal: AbortSignal,
  take: (chunk: Buffer) => T | undefined,
  atEnd: () => T,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = (settle: () => void) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      signal.removeEventListener('abort', onAbort);
      stream.pause();
      settle();
    };
    const onData = (chunk: Buffer | string) => {
      const result = take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (result !== undefined) done(() => resolve(result));
    };
    const onEnd = () => done(() => resolve(atEnd()));
    const onError = (error: Error) => done(() => reject(error));
    const onAbort = () => done(() => reject(signal.reason));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Reads and parses a body from a file or stdin (`-`), refusing one over the limit before reading it all. */
async function readBody(io: CliIo, file: string, source: string): Promise<unknown> {
  let text: string;
  if (file === '-') {
    const read = await readLimited(io.stdin, io.signal);
    if ('tooLarge' in read) throw new CommandError(`${source}: ${tooLarge()} (nothing sent)`, ExitCode.usage);
    text = read.text;
  } else {
    try {
      const info = await stat(file);
      if (info.isDirectory()) throw new CommandError(`${source}: is a directory, not a file`, ExitCode.usage);
      if (info.size > OPERATION_BODY_MAX_BYTES) {
        throw new CommandError(`${source}: ${tooLarge(info.size)} (nothing sent)`, ExitCode.usage);
      }
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (error instanceof CommandError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(error);
      throw new CommandError(`${source}: cannot be read: ${why}`, ExitCode.usage);
    }
  }
  const parsed = parseOperationBody(text);
  if (!parsed.ok)
    throw new CommandError(`${source}: ${parsed.problems.join('; ')} (nothing sent)`, ExitCode.usage);
  return parsed.value;
}

/** Everything `stream` holds, or `tooLarge` as soon as it passes the body limit (the rest is not read). */
function readLimited(stream: Readable, signal: AbortSignal): Promise<{ text: string } | { tooLarge: true }> {
  const chunks: Buffer[] = [];
  let size = 0;
  return consume<{ text: string } | { tooLarge: true }>(
    stream,
    signal,
    (bytes) => {
      size += bytes.length;
      if (size > OPERATION_BODY_MAX_BYTES) return { tooLarge: true };
      chunks.push(bytes);
      return undefined;
    },
    () => ({ text: Buffer.concat(chunks).toString('utf8') }),
  );
}
