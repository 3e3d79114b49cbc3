/**
 * The metric names a PromQL expression reads, for checking dashboards against what fleetwatch
 * exports. Not a parser: it blanks out what cannot be a metric name (strings, label matchers,
 * ranges, `by (...)`-style label lists, Grafana variables, numbers) and keeps every identifier that
 * is not a function call or a keyword.
 */

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'atan2',
  'inf',
  'nan',
]);

export function metricNamesIn(expr: string): string[] {
  let text = expr;
  // Strings first: they may hold anything, braces included.
  text = text.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  // Grafana variables: $var, ${var}, ${var:format}, [[var]].
  text = text.replace(/\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\[\[[^\]]*\]\]/g, ' ');
  text = text.replace(/\{[^}]*\}/g, ' ');
  text = text.replace(/\[[^\]]*\]/g, ' ');
  text = text.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  text = text.replace(/\boffset\s+-?[0-9A-Za-z_]+/g, ' ');
  const names: string[] = [];
  for (const match of text.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    const at = match.index ?? 0;
    // Part of a number (1e3, 0x1f, 2.5e-3).
    if (at > 0 && /[0-9.]/.test(text[at - 1] ?? '')) continue;
    if (KEYWORDS.has(word.toLowerCase())) continue;
    // A function call or an aggregation: `sum(`, `rate (`.
    if (/^\s*\(/.test(text.slice(at + word.length))) continue;
    names.push(word);
  }
  return [...new Set(names)];
}

const HISTOGRAM_SUFFIX = /_(?:bucket|sum|count)$/;

/**
 * The family a sample name belongs to: itself when exported, else (for `x_bucket`, `x_sum`,
 * `x_count`) the histogram `x` when that is exported and is a histogram. Undefined otherwise.
 */
export function familyOf(
  name: string,
  families: ReadonlySet<string>,
  isHistogram: (family: string) => boolean,
): string | undefined {
  if (families.has(name)) return name;
  if (!HISTOGRAM_SUFFIX.test(name)) return undefined;
  const base = name.replace(HISTOGRAM_SUFFIX, '');
  return families.has(base) && isHistogram(base) ? base : undefined;
}
