/**
 * Reads a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds (`120`) or an HTTP-date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`). Returns milliseconds from `now`, never negative (a date in the
 * past is 0), or undefined when the header is missing or unreadable. A value too large to represent
 * is `Infinity`. Callers apply their own default and bounds: this only reads what the peer said.
 *
 * `fractions: true` also accepts fractional seconds (`1.5`), which some services send although the
 * standard does not.
 */
export function parseRetryAfter(
  value: string | readonly string[] | null | undefined,
  now: number = Date.now(),
  options: { fractions?: boolean } = {},
): number | undefined {
  const text = (typeof value === 'string' ? value : value?.[0])?.trim();
  if (!text) return undefined;
  if ((options.fractions ? /^\d+(\.\d+)?$/ : /^\d+$/).test(text)) return Math.round(Number(text) * 1000);
  // An HTTP-date always names a weekday or a month; this refuses "-5", "1e3" and other numbers.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
