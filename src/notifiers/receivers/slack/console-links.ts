import type { FleetEvent } from '../../../events/types.js';
import type { Notification } from '../../notifier.js';
import { entityOf } from './phrases.js';

/**
 * Links from a Slack message into the web console (`console.url`): the console's hash routes
 * (`#/incidents`, `#/incidents/<id>`, `#/vehicle/<id>`, `#/robot/<id>`). One event links to its
 * vehicle or robot (an acknowledgement to its incident); a group to the Incidents page, and to the
 * entity too when every event is about the same one; and to a silence of what fires, prefilled. A
 * link too long to stay readable is left out. How a link is written is the service's (markup.ts).
 */

/** Longest link kept (Slack allows more; a context line is for reading). */
export const MAX_LINK_LENGTH = 500;

const ENTITY_PAGES = new Set(['vehicle', 'robot']);

export interface ConsoleLink {
  url: string;
  label: string;
}

/** `<base>/#/<page>/<param>…`, each part percent-encoded as the console's router reads it. */
export function consolePageUrl(base: string, page: string, ...params: string[]): string {
  return `${base}/#/${[page, ...params.map((param) => encodeURIComponent(param))].join('/')}`;
}

function linkOfSubject(base: string, event: FleetEvent): ConsoleLink | undefined {
  const { kind, id, noun } = entityOf(event.subject);
  if (id === '' || kind === '') return undefined;
  if (ENTITY_PAGES.has(kind)) return { url: consolePageUrl(base, kind, id), label: `${noun.one} ${id}` };
  if (kind === 'incident') return { url: consolePageUrl(base, 'incidents', id), label: 'the incident' };
  return undefined;
}

/** What the silence link covers: the notification's firing events, and the comment it suggests. */
export interface SilenceSource {
  firing: readonly FleetEvent[];
  comment: string;
}

export function consoleLinks(
  notification: Notification,
  base: string,
  silence?: SilenceSource,
): ConsoleLink[] {
  const events = notification.events;
  const first = events[0];
  if (!first) return [];
  const links: ConsoleLink[] = [];
  if (events.length > 1) links.push({ url: consolePageUrl(base, 'incidents'), label: 'incidents' });
  if (events.every((event) => event.subject === first.subject)) {
    const link = linkOfSubject(base, first);
    if (link) links.push(link);
  }
  const silenceLink = silence ? silenceUrl(base, silence.firing, silence.comment) : undefined;
  if (silenceLink) links.push({ url: silenceLink, label: 'silence' });
  return links.filter((link) => link.url.length <= MAX_LINK_LENGTH);
}

/** Most values of one label a silence link names; with more, the label is left out. */
export const SILENCE_LINK_VALUES = { type: 5, subject: 10 } as const;
/** The comment suggested in a silence link is cut to this many characters. */
const SILENCE_COMMENT_LENGTH = 120;

/**
 * The console's New silence form with its matchers filled in from what fires:
 * `#/silences/new?matchers=type%3D…&matchers=subject%3D…&comment=…` (one `label=value` per
 * `matchers`, as the form takes them). Subjects are left out when naming them would make the link
 * too long, types when there are too many; nothing to match (only resolutions or
 * acknowledgements) is no link. The person still reads the form and says why before it is created.
 */
export function silenceUrl(base: string, firing: readonly FleetEvent[], comment: string): string | undefined {
  const muted = firing.filter((event) => entityOf(event.subject).kind !== 'incident');
  const values = (label: keyof typeof SILENCE_LINK_VALUES) => {
    const distinct = [...new Set(muted.map((event) => (label === 'type' ? event.type : event.subject)))];
    return distinct.length <= SILENCE_LINK_VALUES[label] ? distinct.map((value) => `${label}=${value}`) : [];
  };
  const types = values('type');
  const subjects = values('subject');
  const text =
    comment.length > SILENCE_COMMENT_LENGTH ? `${comment.slice(0, SILENCE_COMMENT_LENGTH - 1)}…` : comment;
  for (const matchers of [[...types, ...subjects], types]) {
    if (matchers.length === 0) continue;
    const query = new URLSearchParams([
      ...matchers.map((line): [string, string] => ['matchers', line]),
      ['comment', text],
    ]);
    const url = `${consolePageUrl(base, 'silences', 'new')}?${query}`;
    if (url.length <= MAX_LINK_LENGTH) return url;
  }
  return undefined;
}
