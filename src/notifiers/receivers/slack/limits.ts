/**
 * Slack's message limits (Block Kit reference, incoming-webhook docs). Lengths are counted here in
 * UTF-16 code units, which is never less than Slack's count of characters, and after mrkdwn
 * escaping (`&amp;` counts five), so a message measured here is never too long for Slack.
 */
export const SLACK_LIMITS = {
  /** Top-level `text`; Slack truncates above it. */
  text: 40_000,
  blocks: 50,
  headerText: 150,
  sectionText: 3_000,
  sectionFields: 10,
  fieldText: 2_000,
  contextElements: 10,
  /** A context element's text; Slack allows more, this keeps a context line readable. */
  contextText: 2_000,
} as const;

/**
 * The limits of a message of attachments, as the strictest of the Slack-compatible services
 * draws them: Discord turns each attachment into an embed (title 256, description 4,096, 25 fields
 * of 256 / 1,024, at most 10 embeds and 6,000 characters in all); Mattermost and Rocket.Chat allow
 * more. Counted like `SLACK_LIMITS`.
 */
export const ATTACHMENT_LIMITS = {
  attachments: 10,
  title: 256,
  text: 4_096,
  fields: 25,
  fieldTitle: 256,
  fieldValue: 1_024,
  /** Everything of every attachment together: titles, texts, field titles and values. */
  total: 6_000,
} as const;
