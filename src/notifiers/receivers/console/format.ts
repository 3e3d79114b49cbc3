import { describeEvent } from '../../../events/describe.js';
import type { FleetEvent, Severity } from '../../../events/types.js';
import { oneLine } from '../../../lib/text.js';
import type { Notification } from '../../notifier.js';

export interface ConsoleFormatOptions {
  /** ANSI colours for the severity mark. */
  color: boolean;
  /** Events listed in one notification; the rest are counted. */
  maxEvents: number;
  /** `HH:MM:SS` of an ISO time; local time by default. */
  clock?: (iso: string) => string;
}

const MARKS: Record<Severity | 'resolved', { text: string; ansi: string }> = {
  info: { text: 'INFO', ansi: '36' },
  warning: { text: 'WARN', ansi: '33' },
  critical: { text: 'CRIT', ansi: '1;31' },
  resolved: { text: 'OK', ansi: '32' },
};
/** Width of `HH:MM:SS  MARK  `: where event lines of a group start. */
const INDENT = ' '.repeat(16);

function localClock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '--:--:--';
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

function markOf(notification: Notification, color: boolean): string {
  const mark = MARKS[notification.status === 'resolved' ? 'resolved' : notification.severity];
  const text = mark.text.padEnd(4);
  return color ? `\u001b[${mark.ansi}m${text}\u001b[0m` : text;
}

function titleOf(events: readonly FleetEvent[]): string {
  const first = events[0];
  if (!first) return 'no events';
  if (events.length === 1) return describeEvent(first);
  const types = [...new Set(events.map((event) => event.type))];
  return types.length === 1
    ? `${events.length} events: ${types[0]}`
    : `${events.length} events of ${types.length} types`;
}

/**
 * A notification as terminal lines (each ending in a newline):
 *
 * ```text
 * 14:02:11  WARN  veh-0004 is off the VPN: connected → disconnected
 * 14:02:19  OK    veh-0004 is back on the VPN: disconnected → connected after 8s
 * 14:01:58  INFO  12 events: vehicle.discovered
 *                 • veh-0001 appeared in the vehicle list
 *                 • …and 2 more
 * ```
 *
 * The time is the newest event's observation time; a reminder says so before the title.
 */
export function formatNotification(notification: Notification, options: ConsoleFormatOptions): string {
  const clock = options.clock ?? localClock;
  const events = notification.events;
  const newest = events.at(-1)?.time ?? notification.createdAt;
  const reminder = notification.reminder ? `still firing (reminder ${notification.reminder.count}): ` : '';
  const lines = [
    `${clock(newest)}  ${markOf(notification, options.color)}  ${oneLine(reminder + titleOf(events))}`,
  ];
  if (events.length > 1) {
    const shown = events.slice(0, options.maxEvents);
    for (const event of shown) lines.push(`${INDENT}• ${oneLine(describeEvent(event))}`);
    if (events.length > shown.length) lines.push(`${INDENT}• …and ${events.length - shown.length} more`);
  }
  return `${lines.join('\n')}\n`;
}
