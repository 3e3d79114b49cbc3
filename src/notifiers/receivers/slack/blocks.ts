import { truncate } from '../../../lib/text.js';
import type { Notification } from '../../notifier.js';
import { SLACK_LIMITS } from './limits.js';
import { SLACK_MRKDWN } from './markup.js';
import { buildMessageModel, type MessageModel, type MessageOptions, type MessagePart } from './message.js';

/**
 * The Slack message of one notification: the message model (message.ts) as Block Kit blocks, plus
 * the plain-text `text` Slack shows in notifications and where blocks cannot be drawn. Pure, and
 * within Slack's limits for any input (50 blocks, header 150, section text 3,000, 10 fields of
 * 2,000, text 40,000).
 *
 * Each part of the model starts with a header (its mark and headline; a resolved part after a
 * divider, so resolutions never sit under a firing header), then its fields, its paragraph and its
 * lines packed into as few sections as fit, ending `…and N more` when not all fit. One context line
 * closes the message.
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
  | { type: 'context'; elements: MrkdwnObject[] }
  | { type: 'divider' };

export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

export type SlackMessageOptions = MessageOptions;

const M = SLACK_MRKDWN;
/** The share of a fallback line given to one event's sentence. */
const FALLBACK_LINE_SHARE = 500;

export function buildSlackMessage(
  notification: Notification,
  options: SlackMessageOptions = {},
): SlackMessage {
  const model = buildMessageModel(notification, M, options);
  // Every block but the listed lines, with one kept free per part for `…and N more`.
  const fixed =
    model.parts.reduce(
      (sum, part, index) =>
        sum + (index > 0 ? 2 : 1) + (part.fields.length > 0 ? 1 : 0) + (part.text ? 1 : 0) + 1,
      0,
    ) +
    (model.reminder ? 1 : 0) +
    1;
  let budget = SLACK_LIMITS.blocks - fixed;
  const blocks: SlackBlock[] = [];
  model.parts.forEach((part, index) => {
    if (index > 0) blocks.push({ type: 'divider' });
    blocks.push(headerBlock(part));
    if (index === 0 && model.reminder) blocks.push(contextBlock([model.reminder]));
    if (part.fields.length > 0) blocks.push(fieldsBlock(part));
    if (part.text) blocks.push(sectionBlock(part.text));
    // Later parts with lines keep one section each.
    const later = model.parts.slice(index + 1).filter((next) => next.lines.length > 0).length;
    const { sections, listed } = packLines(part.lines, Math.max(0, budget - later));
    budget -= sections.length;
    blocks.push(...sections);
    const rest = part.lines.length - listed + part.unlisted;
    if (rest > 0) blocks.push(sectionBlock(M.italic(`…and ${rest} more`)));
  });
  blocks.push(contextBlock(model.context));
  return { text: fallbackText(model), blocks };
}

function headerBlock(part: MessagePart): SlackBlock {
  const text = truncate(`${M.mark(part.tone)} ${part.title}`, SLACK_LIMITS.headerText);
  return { type: 'header', text: { type: 'plain_text', text, emoji: true } };
}

function fieldsBlock(part: MessagePart): SlackBlock {
  return {
    type: 'section',
    fields: part.fields
      .slice(0, SLACK_LIMITS.sectionFields)
      .map(({ label, value }) => mrkdwn(`${M.bold(label)}\n${value}`, SLACK_LIMITS.fieldText)),
  };
}

function sectionBlock(text: string): SlackBlock {
  return { type: 'section', text: mrkdwn(text, SLACK_LIMITS.sectionText) };
}

function contextBlock(elements: readonly string[]): SlackBlock {
  return {
    type: 'context',
    elements: elements
      .slice(0, SLACK_LIMITS.contextElements)
      .map((text) => mrkdwn(text, SLACK_LIMITS.contextText)),
  };
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
  return { sections: texts.map(sectionBlock), listed };
}

/** The `text` fallback: each part's mark and headline, then one sentence per listed event of a group. */
function fallbackText(model: MessageModel): string {
  const limit = SLACK_LIMITS.text;
  // Room kept for the `…and N more` lines.
  const reserve = 40 * model.parts.length;
  let text = '';
  for (const part of model.parts) {
    const title = M.text(truncate(`${M.mark(part.tone)} ${part.title}`, FALLBACK_LINE_SHARE));
    text += `${text === '' ? '' : '\n'}${title}`;
    let listed = 0;
    for (const sentence of part.sentences) {
      const line = `\n• ${M.text(truncate(sentence, FALLBACK_LINE_SHARE))}`;
      if (text.length + line.length > limit - reserve) break;
      text += line;
      listed += 1;
    }
    const rest = part.sentences.length - listed + part.unlisted;
    if (rest > 0) text += `\n…and ${rest} more`;
  }
  return text;
}

function mrkdwn(text: string, max: number): MrkdwnObject {
  return { type: 'mrkdwn', text: truncate(text, max) };
}
