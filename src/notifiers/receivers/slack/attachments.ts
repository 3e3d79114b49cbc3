import { truncate } from '../../../lib/text.js';
import type { Notification } from '../../notifier.js';
import { ATTACHMENT_LIMITS } from './limits.js';
import { type Markup, TONE_COLORS } from './markup.js';
import { buildMessageModel, type MessageOptions, type MessagePart } from './message.js';

/**
 * The message of one notification for a Slack-compatible service that does not render Block Kit
 * (Mattermost, Discord, Rocket.Chat): the same message model (message.ts) as Slack attachments,
 * one per part, each with the colour of its tone (green for what resolved), its mark and headline
 * as `title`, its details as `fields`, and its lines as Markdown `text`; the last one ends with the
 * context line. Pure, and within `ATTACHMENT_LIMITS` for any input.
 */

export interface AttachmentField {
  title: string;
  value: string;
  short: boolean;
}

export interface SlackAttachment {
  /** Plain text for notifications and clients that draw no attachment. */
  fallback: string;
  color: string;
  title: string;
  text?: string;
  fields?: AttachmentField[];
}

export interface AttachmentMessage {
  attachments: SlackAttachment[];
}

/** Caps of the fixed pieces, so the listed lines always keep room within `total`. */
const CAPS = { fields: 1_000, text: 600, reminder: 300, context: 1_500, more: 40 } as const;

export function buildAttachmentMessage(
  notification: Notification,
  markup: Markup,
  options: MessageOptions = {},
): AttachmentMessage {
  const model = buildMessageModel(notification, markup, options);
  const parts = model.parts.slice(0, ATTACHMENT_LIMITS.attachments);
  const context = joinWithin(model.context, ' · ', CAPS.context);
  const drafts = parts.map((part, index) => {
    const head = [
      index === 0 && model.reminder ? truncate(model.reminder, CAPS.reminder) : '',
      part.text ? truncate(part.text, CAPS.text) : '',
    ].filter((text) => text !== '');
    const tail = index === parts.length - 1 && context !== '' ? [context] : [];
    return {
      part,
      title: truncate(`${markup.mark(part.tone)} ${markup.plain(part.title)}`, ATTACHMENT_LIMITS.title),
      fields: fieldsOf(part),
      head,
      tail,
    };
  });
  const fixed = drafts.reduce(
    (sum, draft) =>
      sum +
      draft.title.length +
      draft.fields.reduce((size, field) => size + field.title.length + field.value.length, 0) +
      [...draft.head, ...draft.tail].reduce((size, text) => size + text.length + 2, 0) +
      CAPS.more,
    0,
  );
  let room = ATTACHMENT_LIMITS.total - fixed;
  const attachments = drafts.map((draft, index): SlackAttachment => {
    const own =
      ATTACHMENT_LIMITS.text -
      [...draft.head, ...draft.tail].reduce((size, text) => size + text.length + 2, 0) -
      CAPS.more;
    // Later parts with lines keep a share of what is left.
    const later = drafts.slice(index + 1).filter((next) => next.part.lines.length > 0).length;
    const available = Math.min(own, later > 0 ? Math.floor(room / (later + 1)) : room);
    const lines: string[] = [];
    let used = 0;
    for (const line of draft.part.lines) {
      const size = line.length + 1;
      if (used + size > available) break;
      lines.push(line);
      used += size;
    }
    room -= used;
    const rest = draft.part.lines.length - lines.length + draft.part.unlisted;
    const body = [...lines, ...(rest > 0 ? [markup.italic(`…and ${rest} more`)] : [])].join('\n');
    const text = [...draft.head, body, ...draft.tail].filter((piece) => piece !== '').join('\n\n');
    return {
      fallback: draft.title,
      color: TONE_COLORS[draft.part.tone],
      title: draft.title,
      ...(text !== '' ? { text } : {}),
      ...(draft.fields.length > 0 ? { fields: draft.fields } : {}),
    };
  });
  return { attachments };
}

/** The part's fields as short attachment fields, as many as fit `CAPS.fields`. */
function fieldsOf(part: MessagePart): AttachmentField[] {
  const fields: AttachmentField[] = [];
  let size = 0;
  for (const { label, value } of part.fields.slice(0, ATTACHMENT_LIMITS.fields)) {
    const title = truncate(label, ATTACHMENT_LIMITS.fieldTitle);
    // An empty value is refused by Discord; the model has none, but a cut one could be.
    const text = truncate(value, ATTACHMENT_LIMITS.fieldValue) || '-';
    if (size + title.length + text.length > CAPS.fields) break;
    fields.push({ title, value: text, short: true });
    size += title.length + text.length;
  }
  return fields;
}

/** Whole elements joined while they fit: a cut link would be a wrong link. */
function joinWithin(elements: readonly string[], separator: string, max: number): string {
  let text = '';
  for (const element of elements) {
    const next = text === '' ? element : `${text}${separator}${element}`;
    if (next.length > max) break;
    text = next;
  }
  return text;
}
