import type { Severity } from '../../../events/types.js';
import { escapeMrkdwn, slackDate } from './mrkdwn.js';

/**
 * How the text of a message is marked up for one chat service. The message model (message.ts) is
 * written once against this interface; Slack gets its mrkdwn, the Slack-compatible services the
 * Markdown they render (Mattermost and Discord `**bold**`, Rocket.Chat `*bold*`).
 *
 * Outside text (ids, values, sentences) always goes through `text`, `code` or a link's label, so it
 * can neither format the message nor mention anyone (`<!channel>`, `@here`, `@everyone`).
 */
export interface Markup {
  /** Outside text as inert prose. */
  text(value: string): string;
  /** Outside text where the service parses no markup (a header, a title): only mentions made inert. */
  plain(value: string): string;
  /** Text already marked up, in bold / italics. */
  bold(value: string): string;
  italic(value: string): string;
  /** Outside text as inline code (ids, types). */
  code(value: string): string;
  /** A link; the URL is kept whole, the label is outside text. */
  link(url: string, label: string): string;
  /** A time, in the reader's time zone where the service can render one. */
  date(iso: string): string;
  /** The mark of a severity, or of a resolution. */
  mark(tone: Tone): string;
  readonly reminderMark: string;
  readonly linkMark: string;
}

/** What colours a message or one of its parts: the severity of what fires, or resolved. */
export type Tone = Severity | 'resolved';

const SLACK_MARKS: Record<Tone, string> = {
  critical: ':red_circle:',
  warning: ':large_orange_circle:',
  info: ':large_blue_circle:',
  resolved: ':white_check_mark:',
};

/** Unicode marks: every Slack-compatible service draws them, none agrees on `:shortcode:` names. */
const UNICODE_MARKS: Record<Tone, string> = {
  critical: '🔴',
  warning: '🟠',
  info: '🔵',
  resolved: '✅',
};

/** The left bar of an attachment per tone (Slack's own `good`/`danger` words are not understood everywhere). */
export const TONE_COLORS: Record<Tone, string> = {
  critical: '#d40e0d',
  warning: '#f2a100',
  info: '#2f80ed',
  resolved: '#2eb67d',
};

/** Slack's mrkdwn (Block Kit `mrkdwn` text objects and the plain-text fallback). */
export const SLACK_MRKDWN: Markup = {
  text: escapeMrkdwn,
  plain: (value) => value,
  bold: (value) => `*${value}*`,
  italic: (value) => `_${value}_`,
  // A backtick inside would end the code span, so it becomes `'`.
  code: (value) => `\`${escapeMrkdwn(value.replace(/`/g, "'"))}\``,
  // `<`, `>` and `|` would end the link early: percent-encoded in the URL, `/` in the label.
  link: (url, label) =>
    `<${url.replace(/[<>|]/g, (char) => encodeURIComponent(char))}|${escapeMrkdwn(label).replace(/\|/g, '/')}>`,
  date: (iso) => slackDate(iso),
  mark: (tone) => SLACK_MARKS[tone],
  reminderMark: ':repeat:',
  linkMark: ':link:',
};

/** A word joiner after `@` keeps `@here`, `@all`, `@everyone` from mentioning anyone. */
function inertMentions(value: string): string {
  return value.replace(/@/g, '@\u2060');
}

/** CommonMark backslash escapes for the characters that format, quote or link. */
function escapeMarkdown(value: string): string {
  return inertMentions(value.replace(/[\\`*_~|[\]<>#]/g, (char) => `\\${char}`));
}

/** `2026-03-04 10:00:00 UTC`: the same for every reader where no local-time rendering exists. */
function utcDate(iso: string): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return escapeMarkdown(iso);
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function markdown(options: { bold: string; date: (iso: string) => string }): Markup {
  return {
    text: escapeMarkdown,
    plain: inertMentions,
    bold: (value) => `${options.bold}${value}${options.bold}`,
    italic: (value) => `_${value}_`,
    // Nothing is parsed inside a code span (mentions neither); only a backtick would end it.
    code: (value) => `\`${value.replace(/`/g, "'")}\``,
    link: (url, label) =>
      `[${escapeMarkdown(label)}](${url.replace(/[()\s<>]/g, (char) => encodeURIComponent(char))})`,
    date: options.date,
    mark: (tone) => UNICODE_MARKS[tone],
    reminderMark: '🔁',
    linkMark: '🔗',
  };
}

/** Mattermost's Markdown: `**bold**`; no local-time token, so times are UTC. */
export const MATTERMOST_MARKDOWN = markdown({ bold: '**', date: utcDate });

/** Rocket.Chat's Markdown: `*bold*` as in Slack, links and escapes as in Markdown; times in UTC. */
export const ROCKETCHAT_MARKDOWN = markdown({ bold: '*', date: utcDate });

/** Discord's Markdown: `**bold**`, and `<t:…:f>`, which every reader sees in their own time zone. */
export const DISCORD_MARKDOWN = markdown({
  bold: '**',
  date: (iso) => {
    const ms = Date.parse(iso);
    return Number.isFinite(ms) ? `<t:${Math.floor(ms / 1000)}:f>` : escapeMarkdown(iso);
  },
});
