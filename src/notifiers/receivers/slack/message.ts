import { catalogueEntry, isFleetEventType } from '../../../events/catalogue.js';
import {
  describeChange,
  describeCount,
  describeDuration,
  describeEvent,
  describeEvents,
  entityOf,
  hiddenDetail,
  type Noun,
  sinceOf,
} from '../../../events/describe.js';
import { highestSeverity } from '../../../events/severity.js';
import type { FleetEvent, Severity } from '../../../events/types.js';
import { shortenId, truncate } from '../../../lib/text.js';
import { consoleLinks, type Notification } from '../../notifier.js';
import type { Markup, Tone } from './markup.js';

/**
 * What a chat message of one notification says, written once for every service: the Block Kit
 * renderer (blocks.ts) and the attachments renderer (attachments.ts) only lay it out within their
 * service's limits. The text is already marked up in the service's dialect (`Markup`), and every
 * piece of outside text (ids, values) is escaped and cut to its own share before it is placed, so
 * no single id or value can crowd out the rest.
 *
 * A notification is one part, or two when it mixes firing and resolving events: what fires (its
 * severity's mark and colour) and, apart from it, what resolved (✅, green). A part of one event
 * has its details as fields; a part of several counts them (`40 vehicles are off the VPN`),
 * says what they share, and lists one compact line per event, as many as `maxListed` allows.
 */

export interface MessageOptions {
  /** Most events listed one per line in a group; the rest are counted. Default 100. */
  maxListed?: number;
  /** `console.url`: the context links to the console's pages (console-links.ts). */
  consoleUrl?: string;
}

export const DEFAULT_MAX_LISTED = 100;

export interface MessageField {
  /** A word of ours (`Vehicle`, `State`). */
  label: string;
  /** Marked up. */
  value: string;
}

export interface MessagePart {
  tone: Tone;
  /** The headline, not marked up (headers and titles are plain text); without the mark. */
  title: string;
  fields: MessageField[];
  /** A marked-up paragraph: an event's summary, or what a mixed group holds. */
  text?: string;
  /** Marked-up lines, one per listed event (groups only). */
  lines: string[];
  /** The plain sentence of each listed event (groups only), for the plain-text fallback. */
  sentences: string[];
  /** Events of the part beyond `lines`. */
  unlisted: number;
}

export interface MessageModel {
  parts: MessagePart[];
  /** Marked up: `Still firing (reminder 2) · first notified …`. */
  reminder?: string;
  /** Marked-up elements of the closing line: time, source, ids, links. */
  context: string[];
}

/** Shares of a line given to outside text. */
export const ID_SHARE = 120;
const VALUE_SHARE = 160;
const SENTENCE_SHARE = 300;

export function buildMessageModel(
  notification: Notification,
  markup: Markup,
  options: MessageOptions = {},
): MessageModel {
  const maxListed = Math.max(0, Math.floor(options.maxListed ?? DEFAULT_MAX_LISTED));
  const events = notification.events;
  const firing = events.filter((event) => !isResolving(event));
  const resolved = events.filter(isResolving);
  const reminder = notification.reminder && firing.length > 0 ? notification.reminder : undefined;
  const parts: MessagePart[] = [];
  if (firing.length > 0 || resolved.length === 0) {
    const prefix = reminder ? `Still firing (reminder ${reminder.count}): ` : '';
    // A reminder tells how long it has lasted by now, not how long it had when it fired.
    const asOf = reminder ? Date.parse(notification.createdAt) : undefined;
    parts.push(
      partOf(firing, highestSeverity(firing, notification.severity), prefix, markup, maxListed, asOf),
    );
  }
  if (resolved.length > 0) parts.push(partOf(resolved, 'resolved', 'Resolved: ', markup, maxListed));
  const first = events[0];
  const links = linksText(notification, firing, markup, options.consoleUrl);
  const context =
    events.length === 1 && first ? eventContext(first, markup) : groupContext(notification, markup);
  return {
    parts,
    ...(reminder
      ? {
          reminder: `${markup.reminderMark} ${markup.bold(`Still firing (reminder ${reminder.count})`)} · first notified ${markup.date(reminder.firstNotifiedAt)}`,
        }
      : {}),
    context: links ? [...context, links] : context,
  };
}

function partOf(
  events: readonly FleetEvent[],
  tone: Tone,
  prefix: string,
  markup: Markup,
  maxListed: number,
  asOf?: number,
): MessagePart {
  const title = prefix + describeEvents(events);
  const first = events[0];
  if (events.length <= 1 || !first) {
    const summary = first?.data.summary;
    return {
      tone,
      title,
      fields: first ? detailFields(first, markup, asOf) : [],
      ...(typeof summary === 'string' && summary !== '' ? { text: markup.text(summary) } : {}),
      lines: [],
      sentences: [],
      unlisted: 0,
    };
  }
  const sameType = new Set(events.map((event) => event.type)).size === 1;
  const uniformChange = sameType && new Set(events.map((event) => describeChange(event) ?? '')).size === 1;
  const listed = events.slice(0, maxListed);
  return {
    tone,
    title,
    fields: sameType ? sharedFields(events, highestSeverity(events, 'info'), markup) : [],
    ...(sameType ? {} : { text: typeCounts(events, markup) }),
    lines: listed.map((event) =>
      sameType ? compactLine(event, !uniformChange, markup) : sentenceLine(event, markup),
    ),
    sentences: listed.map((event) => describeEvent(event)),
    unlisted: events.length - listed.length,
  };
}

// --- titles -------------------------------------------------------------------------------------

// --- one event ----------------------------------------------------------------------------------

/** Who, what changed, since when, for how long. */
function detailFields(event: FleetEvent, m: Markup, asOf?: number): MessageField[] {
  const data = event.data;
  const entity = entityOf(event.subject);
  const fields: MessageField[] = [
    { label: entity.noun.label, value: m.code(shortenId(entity.id, ID_SHARE * 4)) },
  ];
  const add = (label: string, value: string) => fields.push({ label, value });
  const change = describeChange(event);
  if (change) add('State', m.text(truncate(change, VALUE_SHARE * 4)));
  if (typeof data.part === 'string') add('Part', m.text(truncate(data.part, VALUE_SHARE)));
  if (typeof data.requested === 'string')
    add('Requested', `power ${m.text(truncate(data.requested, VALUE_SHARE))}`);
  if (typeof data.outcome === 'string') add('Outcome', m.text(truncate(data.outcome, VALUE_SHARE)));
  const since = sinceOf(event);
  if (since) add('Since', m.date(since));
  if (typeof data.durationMs === 'number') add('Duration', describeDuration(data.durationMs));
  // Measured when the event was made; `asOf` (a reminder's time) adds what has passed since.
  const passed = asOf === undefined ? 0 : Math.max(0, asOf - Date.parse(event.time)) || 0;
  if (typeof data.pendingForMs === 'number') add('Pending for', describeDuration(data.pendingForMs + passed));
  if (typeof data.ageMs === 'number') add('Report age', describeDuration(data.ageMs + passed));
  const error = errorOf(data.lastError ?? data.error);
  if (error) add('Last error', m.text(truncate(error, VALUE_SHARE)));
  // An acknowledgement (`incident.acknowledged`): who, why, until when.
  if (typeof data.by === 'string') add('Acknowledged by', m.text(truncate(data.by, VALUE_SHARE)));
  if (typeof data.comment === 'string') add('Comment', m.text(truncate(data.comment, VALUE_SHARE * 4)));
  if (typeof data.until === 'string') add('Until', m.date(data.until));
  add('Severity', data.severity);
  return fields;
}

function errorOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { code: errorCode, status } = value as { code?: unknown; status?: unknown };
  if (typeof errorCode !== 'string') return undefined;
  return typeof status === 'number' ? `${errorCode} (${status})` : errorCode;
}

function eventContext(event: FleetEvent, m: Markup): string[] {
  return [
    m.date(event.time),
    `source ${m.code(truncate(event.source, ID_SHARE))}`,
    m.code(event.type),
    `event ${m.code(shortenId(event.id, ID_SHARE))}`,
  ];
}

// --- a group ------------------------------------------------------------------------------------

/** What every event of a one-type group has in common: type, change, window, severity. */
function sharedFields(events: readonly FleetEvent[], severity: Severity, m: Markup): MessageField[] {
  const first = events[0] as FleetEvent;
  const last = events.at(-1) ?? first;
  const entity = entityOf(first.subject);
  const subjects = new Set(events.map((event) => event.subject)).size;
  const fields: MessageField[] = [
    { label: 'Event', value: m.code(truncate(first.type, ID_SHARE)) },
    {
      label: entity.noun.labelMany,
      value: `${subjects}${subjects === events.length ? '' : ` (${events.length} events)`}`,
    },
  ];
  const changes = new Set(events.map((event) => describeChange(event) ?? ''));
  const [change] = changes;
  if (changes.size === 1 && change) {
    fields.push({ label: 'State', value: m.text(truncate(change, VALUE_SHARE * 4)) });
  }
  fields.push({ label: 'First', value: m.date(first.time) });
  if (last !== first) fields.push({ label: 'Last', value: m.date(last.time) });
  fields.push({ label: 'Severity', value: severity });
  return fields;
}

/** For a mixed group: how many of each type, most frequent first. */
function typeCounts(events: readonly FleetEvent[], m: Markup): string {
  const counts = new Map<string, { count: number; subjects: Set<string>; noun: Noun }>();
  for (const event of events) {
    const entry = counts.get(event.type) ?? {
      count: 0,
      subjects: new Set<string>(),
      noun: entityOf(event.subject).noun,
    };
    entry.count += 1;
    entry.subjects.add(event.subject);
    counts.set(event.type, entry);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([type, { subjects, noun }]) => {
      return `• ${m.text(truncate(describeCount(type, subjects.size, noun), SENTENCE_SHARE))}`;
    })
    .join('\n');
}

/** `• `veh-0003` · since <date>`: the entity, its change when it differs, and when. */
function compactLine(event: FleetEvent, withChange: boolean, m: Markup): string {
  const entity = entityOf(event.subject);
  const change = withChange ? describeChange(event) : undefined;
  const parts = [`• ${m.code(shortenId(entity.id, ID_SHARE))}`];
  if (change) parts.push(m.text(truncate(change, VALUE_SHARE)));
  const detail = hiddenDetail(event);
  if (detail) parts.push(m.text(truncate(detail, VALUE_SHARE)));
  parts.push(timingOf(event, m));
  return parts.join(' · ');
}

/** `• 🟠 veh-0003 is off the VPN · <date>` for mixed groups. */
function sentenceLine(event: FleetEvent, m: Markup): string {
  const mark = m.mark(isResolving(event) ? 'resolved' : (event.data.severity ?? 'info'));
  const sentence = m.text(truncate(describeEvent(event), SENTENCE_SHARE));
  return `• ${mark} ${sentence} · ${m.date(event.time)}`;
}

function timingOf(event: FleetEvent, m: Markup): string {
  const data = event.data;
  if (typeof data.durationMs === 'number') return `after ${describeDuration(data.durationMs)}`;
  const since = sinceOf(event);
  return since ? `since ${m.date(since)}` : m.date(event.time);
}

function groupContext(notification: Notification, m: Markup): string[] {
  const first = notification.events[0];
  const labels = Object.entries(notification.groupLabels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
  return [
    first ? `source ${m.code(truncate(first.source, ID_SHARE))}` : '',
    `group ${m.code(truncate(labels || notification.groupKey, ID_SHARE * 2))}`,
    `notification ${m.code(shortenId(notification.id, ID_SHARE))}`,
  ].filter((text) => text !== '');
}

/** `🔗 console: <vehicle veh-1> · <silence>`: the console's pages, and a silence of what fires. */
function linksText(
  notification: Notification,
  firing: readonly FleetEvent[],
  m: Markup,
  base: string | undefined,
): string | undefined {
  if (base === undefined) return undefined;
  const comment = `re: ${describeEvents(firing)}`;
  const links = consoleLinks(notification, base, { firing, comment });
  if (links.length === 0) return undefined;
  return `${m.linkMark} console: ${links.map((link) => m.link(link.url, link.label)).join(' · ')}`;
}

// --- helpers ------------------------------------------------------------------------------------

function isResolving(event: FleetEvent): boolean {
  return isFleetEventType(event.type) && catalogueEntry(event.type).incident?.role === 'resolves';
}
