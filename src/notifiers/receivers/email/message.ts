import {
  describeChange,
  describeCount,
  describeDuration,
  describeEvent,
  describeEvents,
  entityOf,
  hiddenDetail,
  sinceOf,
} from '../../../events/describe.js';
import { incidentRefOf } from '../../../events/incident-ref.js';
import type { FleetEvent, Severity } from '../../../events/types.js';
import { escapeHtml, oneLine, shortenId, truncate } from '../../../lib/text.js';
import { type ConsoleLink, consoleLinks, type Notification } from '../../notifier.js';

/**
 * The email of one notification: a subject, a plain-text body and an HTML body that say the same.
 * Pure. Both bodies are rendered from one list of facts and lines, so they cannot drift apart,
 * and every piece of outside text (ids, values, sentences) is cut to its share and freed of
 * control characters before it is placed; the HTML escapes all of it.
 *
 * The subject reads like the Slack header: `[CRIT] 3 vehicles are off the VPN`,
 * `[RESOLVED] veh-0003 is back on the VPN: disconnected → connected after 3m 05s`,
 * `[WARN] Still firing (reminder 2): …`, after the receiver's `subject` prefix. One event gets its
 * details (entity, state change, since, duration, severity); a group what its events share and one
 * line per event, at most `maxEvents`, then `…and N more`.
 */

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

export interface EmailMessageOptions {
  /** The receiver's `subject`, put before every subject. */
  subjectPrefix?: string;
  /** Most events listed one per line; the rest are counted. */
  maxEvents: number;
  /** `console.url`: links to the console's pages (`consoleLinks`). */
  consoleUrl?: string;
}

type Mark = 'CRIT' | 'WARN' | 'INFO' | 'RESOLVED';

const MARKS: Readonly<Record<Severity, Mark>> = { critical: 'CRIT', warning: 'WARN', info: 'INFO' };
const COLORS: Readonly<Record<Mark, string>> = {
  CRIT: '#cf222e',
  WARN: '#9a6700',
  INFO: '#0969da',
  RESOLVED: '#1a7f37',
};

/** Shares of outside text, so no single id or value can crowd out the rest. */
const ID_SHARE = 120;
const VALUE_SHARE = 160;
const SENTENCE_SHARE = 300;
const TITLE_SHARE = 500;
/** Subjects longer than this are cut (RFC 5322 allows lines of 998; mail clients show far fewer). */
export const MAX_SUBJECT_LENGTH = 250;

/** What both bodies say, as plain text pieces (already cut and on one line each). */
interface Content {
  mark: Mark;
  title: string;
  reminder?: string;
  facts: Array<[label: string, value: string]>;
  lines: string[];
  more: number;
  links: ConsoleLink[];
  footer: string[];
}

export function buildEmail(notification: Notification, options: EmailMessageOptions): EmailMessage {
  const content = contentOf(notification, options);
  const prefix = options.subjectPrefix === undefined ? '' : `${options.subjectPrefix} `;
  return {
    subject: truncate(oneLine(`${prefix}[${content.mark}] ${content.title}`), MAX_SUBJECT_LENGTH),
    text: renderText(content),
    html: renderHtml(content),
  };
}

function contentOf(notification: Notification, options: EmailMessageOptions): Content {
  const events = notification.events;
  const resolved = notification.status === 'resolved';
  const reminder = notification.reminder && !resolved ? notification.reminder : undefined;
  const title = piece(
    (reminder ? `Still firing (reminder ${reminder.count}): ` : '') + describeEvents(events),
    TITLE_SHARE,
  );
  const first = events[0];
  const single = events.length === 1 && first !== undefined;
  const listed = single ? [] : events.slice(0, Math.max(0, Math.floor(options.maxEvents)));
  const sameType = new Set(events.map((event) => event.type)).size === 1;
  const uniformChange = sameType && new Set(events.map((event) => describeChange(event) ?? '')).size === 1;
  return {
    mark: resolved ? 'RESOLVED' : MARKS[notification.severity],
    title,
    ...(reminder
      ? {
          reminder: `Still firing: reminder ${reminder.count}, first notified ${timeOf(reminder.firstNotifiedAt)}.`,
        }
      : {}),
    facts: single ? eventFacts(first) : groupFacts(events, notification.severity, sameType),
    lines: listed.map((event) => (sameType ? compactLine(event, !uniformChange) : sentenceLine(event))),
    more: single ? 0 : events.length - listed.length,
    links: options.consoleUrl === undefined ? [] : consoleLinks(notification, options.consoleUrl),
    footer: footerOf(notification, single ? first : undefined),
  };
}

/** One event: who, what changed, since when, for how long, how bad. */
function eventFacts(event: FleetEvent): Content['facts'] {
  const entity = entityOf(event.subject);
  const facts: Content['facts'] = [
    [entity.noun.label, piece(shortenId(entity.id, ID_SHARE * 4), ID_SHARE * 4)],
  ];
  const change = describeChange(event);
  if (change) facts.push(['State', piece(change, VALUE_SHARE * 4)]);
  const since = sinceOf(event);
  if (since) facts.push(['Since', timeOf(since)]);
  if (typeof event.data.durationMs === 'number')
    facts.push(['Duration', describeDuration(event.data.durationMs)]);
  const summary = event.data.summary;
  if (typeof summary === 'string' && summary !== '') facts.push(['Summary', piece(summary, SENTENCE_SHARE)]);
  facts.push(['Severity', event.data.severity]);
  facts.push(['Event', piece(event.type, ID_SHARE)]);
  facts.push(['Observed', timeOf(event.time)]);
  return facts;
}

/** What the events of a group share: type (or the count of each), entities, window, severity. */
function groupFacts(events: readonly FleetEvent[], severity: Severity, sameType: boolean): Content['facts'] {
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) return [['Severity', severity]];
  const subjects = new Set(events.map((event) => event.subject)).size;
  const count = `${subjects}${subjects === events.length ? '' : ` (${events.length} events)`}`;
  const facts: Content['facts'] = [];
  if (sameType) {
    facts.push(['Event', piece(first.type, ID_SHARE)], [entityOf(first.subject).noun.labelMany, count]);
    const changes = new Set(events.map((event) => describeChange(event) ?? ''));
    const [change] = changes;
    if (changes.size === 1 && change) facts.push(['State', piece(change, VALUE_SHARE * 4)]);
  } else {
    facts.push(['Events', `${events.length}`], ['Types', typeCounts(events)]);
  }
  facts.push(['First', timeOf(first.time)]);
  if (last !== first) facts.push(['Last', timeOf(last.time)]);
  facts.push(['Severity', severity]);
  return facts;
}

/** `2 vehicles are off the VPN; 1 robot …`, most frequent first. */
function typeCounts(events: readonly FleetEvent[]): string {
  const subjects = new Map<string, Set<string>>();
  for (const event of events)
    subjects.set(event.type, (subjects.get(event.type) ?? new Set()).add(event.subject));
  return piece(
    [...subjects.entries()]
      .sort((a, b) => b[1].size - a[1].size)
      .map(([type, of]) => describeCount(type, of.size, entityOf([...of][0] ?? '').noun))
      .join('; '),
    SENTENCE_SHARE * 2,
  );
}

/** `veh-0003 · since 2026-03-04 09:59:00 UTC`: the entity, its change when it differs, and when. */
function compactLine(event: FleetEvent, withChange: boolean): string {
  const parts = [piece(shortenId(entityOf(event.subject).id, ID_SHARE), ID_SHARE)];
  const change = withChange ? describeChange(event) : undefined;
  if (change) parts.push(piece(change, VALUE_SHARE));
  const detail = hiddenDetail(event);
  if (detail) parts.push(piece(detail, VALUE_SHARE));
  parts.push(timingOf(event));
  return parts.join(' · ');
}

/** `[WARN] veh-0003 is off the VPN · 2026-03-04 10:00:00 UTC` for mixed groups. */
function sentenceLine(event: FleetEvent): string {
  const mark = incidentRefOf(event)?.role === 'resolves' ? 'RESOLVED' : MARKS[event.data.severity];
  return `[${mark ?? 'INFO'}] ${piece(describeEvent(event), SENTENCE_SHARE)} · ${timeOf(event.time)}`;
}

function timingOf(event: FleetEvent): string {
  if (typeof event.data.durationMs === 'number') return `after ${describeDuration(event.data.durationMs)}`;
  const since = sinceOf(event);
  return since ? `since ${timeOf(since)}` : timeOf(event.time);
}

function footerOf(notification: Notification, single: FleetEvent | undefined): string[] {
  const first = notification.events[0];
  const labels = Object.entries(notification.groupLabels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
  return [
    first ? `source ${piece(first.source, ID_SHARE)}` : '',
    `group ${piece(labels || notification.groupKey, ID_SHARE * 2)}`,
    single ? `event ${piece(shortenId(single.id, ID_SHARE), ID_SHARE)}` : '',
    `notification ${piece(shortenId(notification.id, ID_SHARE * 2), ID_SHARE * 2)}`,
  ].filter((text) => text !== '');
}

/** `2026-03-04 10:00:00 UTC`: a mail is read anywhere, so the zone is said. */
function timeOf(iso: string): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return piece(iso, 40);
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Outside text, on one line and within its share. */
function piece(text: string, share: number): string {
  return truncate(oneLine(text), share);
}

// --- rendering ----------------------------------------------------------------------------------

function renderText(content: Content): string {
  const width = Math.max(...content.facts.map(([label]) => label.length)) + 2;
  const blocks = [
    [`[${content.mark}] ${content.title}`, ...(content.reminder ? [content.reminder] : [])],
    content.facts.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`),
    [...content.lines.map((line) => `- ${line}`), ...(content.more > 0 ? [`…and ${content.more} more`] : [])],
    content.links.map((link) => `Console, ${link.label}: ${link.url}`),
    [content.footer.join(' · ')],
  ];
  return `${blocks
    .filter((lines) => lines.length > 0)
    .map((lines) => lines.join('\n'))
    .join('\n\n')}\n`;
}

function renderHtml(content: Content): string {
  const color = COLORS[content.mark];
  const rows = content.facts
    .map(
      ([label, value]) =>
        `<tr><th align="left" style="padding:2px 16px 2px 0">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    )
    .join('\n');
  const parts = [
    `<h2 style="margin:0 0 12px;font-size:18px;color:${color}">[${content.mark}] ${escapeHtml(content.title)}</h2>`,
    content.reminder ? `<p><em>${escapeHtml(content.reminder)}</em></p>` : '',
    `<table style="border-collapse:collapse;margin:0 0 12px">\n${rows}\n</table>`,
    content.lines.length > 0
      ? `<ul>\n${content.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('\n')}\n</ul>`
      : '',
    content.more > 0 ? `<p><em>…and ${content.more} more</em></p>` : '',
    content.links.length > 0
      ? `<p>Console: ${content.links
          .map((link) => `<a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a>`)
          .join(' · ')}</p>`
      : '',
    `<p style="color:#656d76;font-size:12px">${escapeHtml(content.footer.join(' · '))}</p>`,
  ].filter((part) => part !== '');
  return [
    '<!DOCTYPE html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(content.title)}</title></head>`,
    '<body style="font-family:Arial,Helvetica,sans-serif;font-size:14px;color:#1f2328">',
    ...parts,
    '</body></html>',
    '',
  ].join('\n');
}
