/** Text helpers for Slack's mrkdwn: escaping and dates (cutting text: `lib/text.ts`). */

/** Escapes the three characters Slack treats as control sequences in mrkdwn (`<`, `>`, `&`). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
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
