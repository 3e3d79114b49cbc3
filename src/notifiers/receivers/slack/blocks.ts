import { catalogueEntry, findEntry, isFleetEventType } from '../../../events/catalogue.js';
import { describeCount, describeDuration, describeEvent, renderValue } from '../../../events/describe.js';
import type { FleetEvent, Severity } from '../../../events/types.js';
import type { Notification } from '../../notifier.js';
import { consoleLinksText } from './console-links.js';
import { SLACK_LIMITS } from './limits.js';
import { code, escapeMrkdwn, shortenId, slackDate, truncate } from './mrkdwn.js';
import { entityOf, type Noun } from './phrases.js';

/**
 * The Slack message of one notification: Block Kit blocks plus the plain-text `text` Slack shows
 * in notifications and where blocks cannot be drawn. Pure, and within Slack's limits for any input
 * (50 blocks, header 150, section text 3,000, 10 fields of 2,000, text 40,000): every piece of
 * outside text (ids, values) is escaped and cut to its own share before it is placed.
 *
 * One event: a header with the severity emoji and `describeEvent`'s sentence, the details as
 * section fields, and a context line with time, source, type and event id. A group: one header
 * that counts (`40 vehicles lost their VPN connection`), what the events share, then one compact
 * line per event — as many as `maxListed` and the block budget allow — ending `…and N more`.
 * Resolved notifications carry a check mark and `Resolved:`; reminders `Still firing (reminder N)`.
 */

export interface PlainTextObject {
  type: 'plain_text';
  text: string;
  emoji?: boolean;
}

export interface MrkdwnObject {
  type: 'mrkdwn';
  text: string;
}

export type SlackBlock =
  | { type: 'header'; text: PlainTextObject }
  | { type: 'section'; text: MrkdwnObject }
  | { type: 'section'; fields: MrkdwnObject[] }
  | { type: 'context'; elements: MrkdwnObject[] };

export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

export interface SlackMessageOptions {
  /** Most events listed one per line in a group message; the rest are counted. Default 100. */
  maxListed?: number;
  /** `console.url`: the context line links to the console's pages (console-links.ts). */
  consoleUrl?: string;
}

export const DEFAULT_MAX_LISTED = 100;

export const SEVERITY_EMOJI: Record<Severity, string> = {
  critical: ':red_circle:',
  warning: ':large_orange_circle:',
  info: ':large_blue_circle:',
};
export const RESOLVED_EMOJI = ':white_check_mark:';

/** Shares of a line given to outside text, so no single id or value can crowd out the rest. */
const ID_SHARE = 120;
const VALUE_SHARE = 160;
const SENTENCE_SHARE = 300;
const FALLBACK_LINE_SHARE = 500;

export function buildSlackMessage(
  notification: Notification,
  options: SlackMessageOptions = {},
): SlackMessage {
  const maxListed = Math.max(0, Math.floor(options.maxListed ?? DEFAULT_MAX_LISTED));
  const events = notification.events;
  const title = titleOf(notification);
  const emoji = notification.status === 'resolved' ? RESOLVED_EMOJI : SEVERITY_EMOJI[notification.severity];
  const header: SlackBlock = {
    type: 'header',
    text: { type: 'plain_text', text: truncate(`${emoji} ${title}`, SLACK_LIMITS.headerText), emoji: true },
  };
  const reminder = reminderBlock(notification);
  const first = events[0];
  const links = consoleLinksText(notification, options.consoleUrl);
  const body =
    events.length === 0
      ? []
      : events.length === 1 && first
        ? singleBlocks(first, links)
        : groupBlocks(notification, maxListed, links);
  const blocks = [header, ...(reminder ? [reminder] : []), ...body];
  return { text: fallbackText(notification, `${emoji} ${title}`, maxListed), blocks };
}

// --- titles -------------------------------------------------------------------------------------

function titleOf(notification: Notification): string {
  const prefix =
    notification.status === 'resolved'
      ? 'Resolved: '
      : notification.reminder
        ? `Still firing (reminder ${notification.reminder.count}): `
        : '';
  return prefix + subjectLine(notification.events);
}

function subjectLine(events: readonly FleetEvent[]): string {
  const first = events[0];
  if (!first) return 'No events';
  if (events.length === 1) return describeEvent(first);
  const types = new Set(events.map((event) => event.type));
  const subjects = new Set(events.map((event) => event.subject));
  const entity = entityOf(first.subject);
  if (types.size === 1) {
    if (subjects.size === 1) return `${describeEvent(events.at(-1) ?? first)} (${events.length} events)`;
    return describeCount(first.type, subjects.size, entity.noun);
  }
  const kinds = new Set(events.map((event) => entityOf(event.subject).kind));
  const what = kinds.size === 1 ? `${entity.noun.one} events` : 'fleet events';
  return `${events.length} ${what} (${types.size} types)`;
}

function reminderBlock(notification: Notification): SlackBlock | undefined {
  const reminder = notification.reminder;
  if (!reminder || notification.status === 'resolved') return undefined;
  return {
    type: 'context',
    elements: [
      mrkdwn(
        `:repeat: *Still firing (reminder ${reminder.count})* · first notified ${slackDate(reminder.firstNotifiedAt)}`,
        SLACK_LIMITS.contextText,
      ),
    ],
  };
}

// --- one event ----------------------------------------------------------------------------------

function singleBlocks(event: FleetEvent, links: string | undefined): SlackBlock[] {
  const blocks: SlackBlock[] = [{ type: 'section', fields: detailFields(event) }];
  const summary = event.data.summary;
  if (typeof summary === 'string' && summary !== '') {
    blocks.push({ type: 'section', text: mrkdwn(escapeMrkdwn(summary), SLACK_LIMITS.sectionText) });
  }
  blocks.push({
    type: 'context',
    elements: [
      slackDate(event.time),
      `source ${code(truncate(event.source, ID_SHARE))}`,
      code(event.type),
      `event ${code(shortenId(event.id, ID_SHARE))}`,
      ...(links ? [links] : []),
    ].map((text) => mrkdwn(text, SLACK_LIMITS.contextText)),
  });
  return blocks;
}

/** `*Label*\nvalue` fields: who, what changed, since when, for how long. */
function detailFields(event: FleetEvent): MrkdwnObject[] {
  const data = event.data;
  const entity = entityOf(event.subject);
  const fields: Array<[string, string]> = [[entity.noun.label, code(shortenId(entity.id, ID_SHARE * 4))]];
  const change = changeOf(event);
  if (change) fields.push(['State', escapeMrkdwn(truncate(change, VALUE_SHARE * 4))]);
  if (typeof data.part === 'string') fields.push(['Part', escapeMrkdwn(truncate(data.part, VALUE_SHARE))]);
  if (typeof data.requested === 'string') {
    fields.push(['Requested', `power ${escapeMrkdwn(truncate(data.requested, VALUE_SHARE))}`]);
  }
  if (typeof data.outcome === 'string')
    fields.push(['Outcome', escapeMrkdwn(truncate(data.outcome, VALUE_SHARE))]);
  const since = sinceOf(event);
  if (since) fields.push(['Since', slackDate(since)]);
  if (typeof data.durationMs === 'number') fields.push(['Duration', describeDuration(data.durationMs)]);
  if (typeof data.pendingForMs === 'number')
    fields.push(['Pending for', describeDuration(data.pendingForMs)]);
  if (typeof data.ageMs === 'number') fields.push(['Report age', describeDuration(data.ageMs)]);
  const error = errorOf(data.lastError ?? data.error);
  if (error) fields.push(['Last error', escapeMrkdwn(truncate(error, VALUE_SHARE))]);
  // An acknowledgement (`incident.acknowledged`): who, why, until when.
  if (typeof data.by === 'string')
    fields.push(['Acknowledged by', escapeMrkdwn(truncate(data.by, VALUE_SHARE))]);
  if (typeof data.comment === 'string') {
    fields.push(['Comment', escapeMrkdwn(truncate(data.comment, VALUE_SHARE * 4))]);
  }
  if (typeof data.until === 'string') fields.push(['Until', slackDate(data.until)]);
  fields.push(['Severity', data.severity]);
  return fields
    .slice(0, SLACK_LIMITS.sectionFields)
    .map(([label, value]) => mrkdwn(`*${label}*\n${value}`, SLACK_LIMITS.fieldText));
}

/** `previous → current`, or just `current` when there was no previous; hashes are not shown. */
function changeOf(event: FleetEvent): string | undefined {
  const data = event.data;
  if (findEntry(event.type)?.hidesValues) return undefined;
  const hasPrevious = 'previous' in data && data.previous !== undefined;
  const hasCurrent = 'current' in data && data.current !== undefined;
  if (hasPrevious && hasCurrent) return `${renderValue(data.previous)} → ${renderValue(data.current)}`;
  if (hasCurrent) return renderValue(data.current);
  return undefined;
}

function sinceOf(event: FleetEvent): string | undefined {
  const data = event.data;
  for (const key of ['since', 'pendingSince', 'missingSince'] as const) {
    const value = data[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

function errorOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { code: errorCode, status } = value as { code?: unknown; status?: unknown };
  if (typeof errorCode !== 'string') return undefined;
  return typeof status === 'number' ? `${errorCode} (${status})` : errorCode;
}

// --- a group ------------------------------------------------------------------------------------

function groupBlocks(notification: Notification, maxListed: number, links: string | undefined): SlackBlock[] {
  const events = notification.events;
  const sameType = new Set(events.map((event) => event.type)).size === 1;
  const summary = sameType ? sharedFields(events, notification.severity) : typeCounts(events);
  const context = groupContext(notification, links);
  const fixed = 1 + (notification.reminder && notification.status !== 'resolved' ? 1 : 0) + 2;
  // One block stays free for `…and N more`.
  const listBudget = SLACK_LIMITS.blocks - fixed - 1;
  const uniformChange = sameType && new Set(events.map((event) => changeOf(event) ?? '')).size === 1;
  const lines: string[] = [];
  for (const event of events.slice(0, maxListed)) {
    lines.push(sameType ? compactLine(event, !uniformChange) : sentenceLine(event));
  }
  const { sections, listed } = packLines(lines, listBudget);
  const blocks: SlackBlock[] = [summary, ...sections];
  const rest = events.length - listed;
  if (rest > 0)
    blocks.push({ type: 'section', text: mrkdwn(`_…and ${rest} more_`, SLACK_LIMITS.sectionText) });
  blocks.push(context);
  return blocks;
}

/** What every event of a one-type group has in common: type, change, window, severity. */
function sharedFields(events: readonly FleetEvent[], severity: Severity): SlackBlock {
  const first = events[0] as FleetEvent;
  const last = events.at(-1) ?? first;
  const entity = entityOf(first.subject);
  const subjects = new Set(events.map((event) => event.subject)).size;
  const fields: Array<[string, string]> = [
    ['Event', code(truncate(first.type, ID_SHARE))],
    [entity.noun.labelMany, `${subjects}${subjects === events.length ? '' : ` (${events.length} events)`}`],
  ];
  const changes = new Set(events.map((event) => changeOf(event) ?? ''));
  const [change] = changes;
  if (changes.size === 1 && change) fields.push(['State', escapeMrkdwn(truncate(change, VALUE_SHARE * 4))]);
  fields.push(['First', slackDate(first.time)]);
  if (last !== first) fields.push(['Last', slackDate(last.time)]);
  fields.push(['Severity', severity]);
  return {
    type: 'section',
    fields: fields.map(([label, value]) => mrkdwn(`*${label}*\n${value}`, SLACK_LIMITS.fieldText)),
  };
}

/** For a mixed group: how many of each type, most frequent first. */
function typeCounts(events: readonly FleetEvent[]): SlackBlock {
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
  const lines = [...counts.entries()]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([type, { subjects, noun }]) => {
      return `• ${escapeMrkdwn(truncate(describeCount(type, subjects.size, noun), SENTENCE_SHARE))}`;
    });
  return { type: 'section', text: mrkdwn(lines.join('\n'), SLACK_LIMITS.sectionText) };
}

/** `• `veh-0003` · since <date>`: the entity, its change when it differs, and when. */
function compactLine(event: FleetEvent, withChange: boolean): string {
  const entity = entityOf(event.subject);
  const change = withChange ? changeOf(event) : undefined;
  const parts = [`• ${code(shortenId(entity.id, ID_SHARE))}`];
  if (change) parts.push(escapeMrkdwn(truncate(change, VALUE_SHARE)));
  parts.push(timingOf(event));
  return parts.join(' · ');
}

/** `• :large_orange_circle: veh-0003 lost its VPN connection · <date>` for mixed groups. */
function sentenceLine(event: FleetEvent): string {
  const emoji = isResolving(event) ? RESOLVED_EMOJI : (SEVERITY_EMOJI[event.data.severity] ?? '');
  const sentence = escapeMrkdwn(truncate(describeEvent(event), SENTENCE_SHARE));
  return `• ${emoji} ${sentence} · ${slackDate(event.time)}`;
}

function timingOf(event: FleetEvent): string {
  const data = event.data;
  if (typeof data.durationMs === 'number') return `after ${describeDuration(data.durationMs)}`;
  const since = sinceOf(event);
  return since ? `since ${slackDate(since)}` : slackDate(event.time);
}

/** Lines into as few sections as fit, at most `budget` of them; says how many lines made it. */
function packLines(lines: readonly string[], budget: number): { sections: SlackBlock[]; listed: number } {
  const texts: string[] = [];
  let listed = 0;
  for (const line of lines) {
    const bounded = truncate(line, SLACK_LIMITS.sectionText);
    const current = texts.at(-1);
    if (current !== undefined && current.length + 1 + bounded.length <= SLACK_LIMITS.sectionText) {
      texts[texts.length - 1] = `${current}\n${bounded}`;
    } else if (texts.length < budget) {
      texts.push(bounded);
    } else {
      break;
    }
    listed += 1;
  }
  return { sections: texts.map((text) => ({ type: 'section', text: { type: 'mrkdwn', text } })), listed };
}

function groupContext(notification: Notification, links: string | undefined): SlackBlock {
  const first = notification.events[0];
  const labels = Object.entries(notification.groupLabels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
  const elements = [
    first ? `source ${code(truncate(first.source, ID_SHARE))}` : '',
    `group ${code(truncate(labels || notification.groupKey, ID_SHARE * 2))}`,
    `notification ${code(shortenId(notification.id, ID_SHARE))}`,
    links ?? '',
  ].filter((text) => text !== '');
  return { type: 'context', elements: elements.map((text) => mrkdwn(text, SLACK_LIMITS.contextText)) };
}

// --- plain text ---------------------------------------------------------------------------------

/** The `text` fallback: the title, then one `describeEvent` line per listed event of a group. */
function fallbackText(notification: Notification, title: string, maxListed: number): string {
  const limit = SLACK_LIMITS.text;
  let text = escapeMrkdwn(truncate(title, FALLBACK_LINE_SHARE));
  const events = notification.events;
  if (events.length <= 1) return text;
  // Room kept for the `…and N more` line.
  const reserve = 40;
  let listed = 0;
  for (const event of events.slice(0, maxListed)) {
    const line = `\n• ${escapeMrkdwn(truncate(describeEvent(event), FALLBACK_LINE_SHARE))}`;
    if (text.length + line.length > limit - reserve) break;
    text += line;
    listed += 1;
  }
  if (listed < events.length) text += `\n…and ${events.length - listed} more`;
  return text;
}

// --- helpers ------------------------------------------------------------------------------------

function mrkdwn(text: string, max: number): MrkdwnObject {
  return { type: 'mrkdwn', text: truncate(text, max) };
}

function isResolving(event: FleetEvent): boolean {
  return isFleetEventType(event.type) && catalogueEntry(event.type).incident?.role === 'resolves';
}
