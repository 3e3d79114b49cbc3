import type { FleetEvent } from '../../../events/types.js';
import { consolePageUrl, type Notification } from '../../notifier.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { entityOf } from './phrases.js';

/**
 * Links from a Slack message into the web console (`console.url`): the console's hash routes
 * (`#/incidents`, `#/incidents/<id>`, `#/vehicle/<id>`, `#/robot/<id>`). One event links to its
 * vehicle or robot (an acknowledgement to its incident); a group to the Incidents page, and to the
 * entity too when every event is about the same one. A link too long to stay readable is left out.
 */

/** Longest link kept (Slack allows more; a context line is for reading). */
export const MAX_LINK_LENGTH = 500;

const ENTITY_PAGES = new Set(['vehicle', 'robot']);

export interface ConsoleLink {
  url: string;
  label: string;
}

function linkOfSubject(base: string, event: FleetEvent): ConsoleLink | undefined {
  const { kind, id, noun } = entityOf(event.subject);
  if (id === '' || kind === '') return undefined;
  if (ENTITY_PAGES.has(kind)) return { url: consolePageUrl(base, kind, id), label: `${noun.one} ${id}` };
  if (kind === 'incident') return { url: consolePageUrl(base, 'incidents', id), label: 'the incident' };
  return undefined;
}

export function consoleLinks(notification: Notification, base: string): ConsoleLink[] {
  const events = notification.events;
  const first = events[0];
  if (!first) return [];
  const links: ConsoleLink[] = [];
  if (events.length > 1) links.push({ url: consolePageUrl(base, 'incidents'), label: 'incidents' });
  if (events.every((event) => event.subject === first.subject)) {
    const link = linkOfSubject(base, first);
    if (link) links.push(link);
  }
  return links.filter((link) => link.url.length <= MAX_LINK_LENGTH);
}

/**
 * `<url|label>` in mrkdwn. The URL is kept whole (a cut link is a wrong link); `<`, `>` and `|`
 * would end it early, so they are percent-encoded; the label is escaped.
 */
export function mrkdwnLink(link: ConsoleLink): string {
  const url = link.url.replace(/[<>|]/g, (char) => encodeURIComponent(char));
  return `<${url}|${escapeMrkdwn(link.label).replace(/\|/g, '/')}>`;
}

/** The context line's element: `:link: console: <…|robot rb-1> · <…|incidents>`. */
export function consoleLinksText(notification: Notification, base: string | undefined): string | undefined {
  if (base === undefined) return undefined;
  const links = consoleLinks(notification, base);
  if (links.length === 0) return undefined;
  return `:link: console: ${links.map(mrkdwnLink).join(' · ')}`;
}
