/**
 * Text for people, cut and escaped: the helpers every message builder (Slack's mrkdwn, an email's
 * HTML and plain text, the API docs page) shares. Lengths are UTF-16 code units.
 */

const ELLIPSIS = '…';

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** One line: never let outside text break a layout (or write control characters). */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

/** Text safe inside an HTML element or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

/**
 * Cuts `text` to at most `max` UTF-16 code units, ending in `…` when cut. Never splits a surrogate
 * pair or an escaped entity (`&amp;`), so the result stays valid text.
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
