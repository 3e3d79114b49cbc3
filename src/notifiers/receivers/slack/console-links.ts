import { type ConsoleLink, consoleLinks, type Notification } from '../../notifier.js';
import { escapeMrkdwn } from './mrkdwn.js';

/**
 * Links from a Slack message into the web console (`console.url`), in mrkdwn; which pages a
 * notification links to is `consoleLinks` (notifier.ts), shared by every kind.
 */

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
