import { type Command, InvalidArgumentError } from 'commander';
import { describeDuration } from '../../events/describe.js';
import { SilenceStore } from '../../notifiers/muting/silence-store.js';
import {
  MAX_SILENCE_MS,
  MIN_SILENCE_MS,
  type Silence,
  silenceState,
} from '../../notifiers/muting/silences.js';
import type { MatchSpec } from '../../notifiers/routing/matcher.js';
import { durationBounds } from '../arguments.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { printList, writeJson, writeLine, writeUsage } from '../io.js';

/**
 * `fleetwatch silence add|list|expire`: operators mute what matches for a while and say who and
 * why. Silences live in Redis (`{p}:silences`), so every running replica sees a change within
 * its silence cache (2 s). Matchers use the route matcher language: `type` and `subject` take
 * globs, `severity` a minimum, `tag.<name>` an entity tag's value.
 */

export interface MatchArgument {
  name: 'type' | 'subject' | 'severity' | `tag.${string}`;
  value: string;
}

const MATCH_HINT =
  'expected name=value where name is type, subject, severity or tag.<tag name> ' +
  '(for example type=vehicle.vpn.* or subject=vehicle/veh-0003).';

/** Commander parser for a repeated `--match name=value`. */
export function matchArgument(text: string, previous: MatchArgument[] = []): MatchArgument[] {
  const equals = text.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError(MATCH_HINT);
  const name = text.slice(0, equals).trim();
  const value = text.slice(equals + 1).trim();
  if (value === '') throw new InvalidArgumentError(`"${name}" has no value; ${MATCH_HINT}`);
  const isTag = name.startsWith('tag.') && name.length > 4;
  if (!isTag && name !== 'type' && name !== 'subject' && name !== 'severity') {
    throw new InvalidArgumentError(`unknown matcher "${name}"; ${MATCH_HINT}`);
  }
  return [...previous, { name: name as MatchArgument['name'], value }];
}

/** `--match` arguments as silence matchers; repeated names become lists (any of them matches). */
export function matchersOf(args: readonly MatchArgument[]): MatchSpec {
  const lists = new Map<string, string[]>();
  for (const { name, value } of args) lists.set(name, [...(lists.get(name) ?? []), value]);
  const one = (values: string[]) => (values.length === 1 ? values[0] : values);
  const spec: Record<string, unknown> = {};
  const tags: Record<string, string | string[] | undefined> = {};
  for (const [name, values] of lists) {
    if (name === 'severity') {
      if (values.length > 1) {
        throw new InvalidArgumentError('severity is a minimum: give --match severity= once.');
      }
      spec.severity = values[0];
    } else if (name.startsWith('tag.')) {
      tags[name.slice(4)] = one(values);
    } else {
      spec[name] = one(values);
    }
  }
  if (Object.keys(tags).length > 0) spec.tags = tags;
  return spec as MatchSpec;
}

/** `type=vehicle.vpn.* subject=vehicle/veh-0003 tag.site=north` */
export function formatMatchers(matchers: MatchSpec): string {
  const parts: string[] = [];
  const add = (name: string, value: string | readonly string[] | undefined) => {
    if (value === undefined) return;
    for (const item of typeof value === 'string' ? [value] : value) parts.push(`${name}=${item}`);
  };
  add('type', matchers.type);
  add('subject', matchers.subject);
  add('severity', matchers.severity);
  for (const [name, value] of Object.entries(matchers.tags ?? {})) add(`tag.${name}`, value);
  return parts.join(' ');
}

/** The schema's field names, as the flags that set them. */
const FLAG_OF: Array<[string, string]> = [
  ['matchers.tags.', '--match tag.'],
  ['matchers.', '--match '],
  ['matchers', '--match'],
  ['duration', '--duration'],
  ['endsAt', '--until'],
  ['startsAt', '--until'],
  ['createdBy', '--author'],
  ['comment', '--comment'],
];

function inFlags(problem: string): string {
  for (const [field, flag] of FLAG_OF) {
    if (problem.startsWith(field)) return flag + problem.slice(field.length);
  }
  return problem;
}

interface AddOptions {
  match?: MatchArgument[];
  duration?: string;
  until?: string;
  author?: string;
  comment?: string;
  json?: boolean;
}

export function registerSilenceCommand(program: Command, context: CliContext): void {
  const silence = program
    .command('silence')
    .description('mute notifications of what matches, for a while (fleetwatch keeps logging the events)');

  silence
    .command('add')
    .description('create a silence')
    .option(
      '--match <name=value>',
      'what to mute (repeatable): type=<glob>, subject=<glob>, severity=<minimum>, tag.<tag>=<glob>',
      matchArgument,
    )
    .option(
      '--duration <duration>',
      `how long from now, e.g. 30m or 2h ${durationBounds({ min: MIN_SILENCE_MS, max: MAX_SILENCE_MS })}`,
    )
    .option('--until <time>', 'until this ISO 8601 time, e.g. 2026-11-21T18:00:00Z')
    .option('--author <name>', 'who creates it (default: $USER)')
    .option('--comment <text>', 'why: a ticket, the work going on')
    .option('--json', 'print the silence as JSON')
    .action(async (options: AddOptions) => {
      const problems: string[] = [];
      if (!options.match || options.match.length === 0) {
        problems.push(
          '--match: give at least one, e.g. --match type=vehicle.vpn.* (a silence needs a scope)',
        );
      }
      if (options.duration === undefined && options.until === undefined) {
        problems.push('--duration or --until: say how long, e.g. --duration 2h');
      }
      if (options.duration !== undefined && options.until !== undefined) {
        problems.push('--duration and --until: give one of them, not both');
      }
      const author = options.author ?? context.io.env.USER ?? context.io.env.LOGNAME;
      if (author === undefined) problems.push('--author: say who creates the silence ($USER is not set)');
      if (options.comment === undefined) problems.push('--comment: say why (a ticket, the work going on)');
      let matchers: MatchSpec = {};
      try {
        matchers = matchersOf(options.match ?? []);
      } catch (error) {
        problems.push(`--match: ${(error as Error).message}`);
      }
      if (problems.length > 0) return usage(context, problems);
      const input = {
        matchers,
        ...(options.duration === undefined ? {} : { duration: options.duration }),
        ...(options.until === undefined ? {} : { endsAt: options.until }),
        ...(author === undefined ? {} : { createdBy: author }),
        ...(options.comment === undefined ? {} : { comment: options.comment }),
      };
      await withSilences(context, async (store) => {
        const now = Date.now();
        const added = await store.add(input, now);
        if (!added.ok) return usage(context, added.problems.map(inFlags));
        warnUnknownTags(context, matchers);
        if (options.json) return writeJson(context.io.stdout, { ...added.silence, state: 'active' });
        const ends = added.silence.endsAt;
        writeLine(
          context.io.stdout,
          `${added.silence.id}  active until ${ends} (${describeDuration(Date.parse(ends) - now)} from now): ${formatMatchers(added.silence.matchers)}`,
        );
      });
    });

  silence
    .command('list')
    .description('list active and pending silences')
    .option('--all', 'include expired silences (kept 7 days)')
    .option('--json', 'print a JSON array')
    .action(async (options: { all?: boolean; json?: boolean }) => {
      await withSilences(context, async (store) => {
        const now = Date.now();
        const silences = await store.list({ all: options.all === true, now });
        printList(context.io, options.json, silences, {
          headers: ['ID', 'STATE', 'ENDS', 'MATCHES', 'BY', 'COMMENT'],
          row: (item) => row(item, now),
          empty: options.all ? 'no silences' : 'no active or pending silences (--all shows expired ones)',
          emptyTo: 'stderr',
          json: (items) => items.map((item) => ({ ...item, state: silenceState(item, now) })),
        });
      });
    });

  silence
    .command('expire')
    .description('end a silence now')
    .argument('<id>', 'the silence id (see silence list)')
    .action(async (id: string) => {
      await withSilences(context, async (store) => {
        const expired = await store.expire(id, Date.now());
        if (!expired.found) {
          writeLine(
            context.io.stderr,
            `fleetwatch: no silence "${id}" (fleetwatch silence list --all shows every silence)`,
          );
          context.exitCode = ExitCode.notFound;
          return;
        }
        writeLine(
          context.io.stdout,
          expired.alreadyExpired
            ? `${id} had already expired at ${expired.silence.endsAt}`
            : `${id} expired: ${formatMatchers(expired.silence.matchers)} is no longer muted`,
        );
      });
    });
}

function row(silence: Silence, now: number): string[] {
  const state = silenceState(silence, now);
  const ends = Date.parse(silence.endsAt);
  const when =
    state === 'expired'
      ? `${silence.endsAt} (${describeDuration(now - ends)} ago)`
      : `${silence.endsAt} (in ${describeDuration(ends - now)})`;
  return [silence.id, state, when, formatMatchers(silence.matchers), silence.createdBy, silence.comment];
}

function usage(context: CliContext, problems: readonly string[]): void {
  writeUsage(context.io, 'silence add', problems);
  context.exitCode = ExitCode.usage;
}

/** A tag no `entity_tags` entry sets never matches: say so (the silence is kept). */
function warnUnknownTags(context: CliContext, matchers: MatchSpec): void {
  const known = new Set(
    context.config().notifications.entity_tags.flatMap((entry) => Object.keys(entry.tags)),
  );
  for (const name of Object.keys(matchers.tags ?? {})) {
    if (!known.has(name)) {
      writeLine(
        context.io.stderr,
        `fleetwatch: warning: no entity_tags entry in the config sets the tag "${name}", so tag.${name} matches nothing`,
      );
    }
  }
}

function withSilences(context: CliContext, use: (store: SilenceStore) => Promise<void>): Promise<void> {
  return context.withRedis((redis, config) => use(new SilenceStore({ redis, prefix: config.redis.prefix })));
}
