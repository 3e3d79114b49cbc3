import type { Command } from 'commander';
import type { ListReading, RejectedElement } from '../upstream/list-elements.js';
import type { CliContext } from './context.js';
import { type ListView, printList, printRead, type ReadView, writeLine } from './io.js';

/**
 * Read commands declared as data: words, positional arguments, what to read and how to print it.
 * Every read takes `--json` for scripts; the text form is for people.
 */

interface ReadCommandWords {
  name: string;
  description: string;
  /** Positional arguments, each required: `[name, help]`. */
  args?: readonly (readonly [name: string, help: string])[];
  /** Help of `--json`. */
  jsonHelp: string;
}

/** A command that reads one thing (`robot lease <deviceId>`). */
export function addReadCommand<T>(
  parent: Command,
  context: CliContext,
  spec: ReadCommandWords & {
    read(args: string[], signal: AbortSignal): Promise<T>;
    view(args: string[]): ReadView<T>;
  },
): Command {
  const command = declare(parent, spec);
  return command.action(async (...values: unknown[]) => {
    const args = values.slice(0, spec.args?.length ?? 0) as string[];
    // With the options of the groups above: `robot lease --json status <id>` is `--json` too.
    const options = (values[values.length - 1] as Command).optsWithGlobals<{ json?: boolean }>();
    const value = await spec.read(args, context.io.signal);
    printRead(context.io, options.json, value, spec.view(args));
  });
}

/**
 * A command that reads a fleet list (`vehicles`): the elements that match the spec are printed as
 * usual; each one that does not is a warning line on stderr, and the command still succeeds.
 */
export function addListCommand<T>(
  parent: Command,
  context: CliContext,
  spec: ReadCommandWords & {
    /** What the list holds, for the warnings: `vehicle`. */
    noun: string;
    list(signal: AbortSignal): Promise<ListReading<T>>;
    view: ListView<T>;
  },
): Command {
  return declare(parent, spec).action(async (options: { json?: boolean }) => {
    const { items, rejected } = await spec.list(context.io.signal);
    for (const element of rejected) {
      writeLine(context.io.stderr, `fleetwatch: warning: ${describeRejected(spec.noun, element)}`);
    }
    printList(context.io, options.json, items, spec.view);
  });
}

/** `vehicle "veh-0050" left out: its list element does not match the spec: ipAddress: …` */
function describeRejected(noun: string, { id, index, error }: RejectedElement): string {
  const what = id === undefined ? `element ${index} of the ${noun} list` : `${noun} "${id}"`;
  return `${what} left out: its list element does not match the spec: ${error.summary}`;
}

function declare(parent: Command, words: ReadCommandWords): Command {
  const command = parent.command(words.name).description(words.description);
  for (const [name, help] of words.args ?? []) command.argument(`<${name}>`, help);
  return command.option('--json', words.jsonHelp);
}
