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
