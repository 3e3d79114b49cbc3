/** Text helpers for Slack's mrkdwn (escaping, dates) and for cutting any text to a length. */

const ELLIPSIS = '…';

/** Escapes the three characters Slack treats as control sequences in mrkdwn (`<`, `>`, `&`). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Cuts `text` to at most `max` UTF-16 code units, ending in `…` when cut. Never splits a surrogate
 * pair or an mrkdwn entity (`&amp;`), so the result stays valid text.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let end = max - ELLIPSIS.length;
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  const entity = text.lastIndexOf('&', end - 1);
  if (entity !== -1 && entity >= end - 5 && !text.slice(entity, end).includes(';')) end = entity;
  return text.slice(0, Math.max(0, end)) + ELLIPSIS;
}

/**
 * Cuts an identifier in the middle (`veh-aaaa…aaaa-0042`): ids of one fleet often share a long
 * prefix, and the end is what tells them apart. At most `max` UTF-16 code units.
 */
export function shortenId(id: string, max: number): string {
  if (id.length <= max) return id;
  if (max < 8) return truncate(id, max);
  let head = Math.ceil((max - ELLIPSIS.length) / 2);
  let tail = max - ELLIPSIS.length - head;
  if (isHighSurrogate(id.charCodeAt(head - 1))) head -= 1;
  if (isLowSurrogate(id.charCodeAt(id.length - tail))) tail -= 1;
  return id.slice(0, head) + ELLIPSIS + id.slice(id.length - tail);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A time Slack renders in the reader's own time zone, falling back to the ISO text elsewhere
 * (notifications, old clients). `format` is one of Slack's date tokens, e.g.
 * `{date_short_pretty} {time_secs}`.
 */
export function slackDate(iso: string, format = '{date_short_pretty} {time_secs}'): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return escapeMrkdwn(iso);
  return `<!date^${Math.floor(ms / 1000)}^${format}|${new Date(ms).toISOString()}>`;
}
