import { METRIC_PREFIX, type MetricType } from './catalogue.js';

/**
 * The Prometheus naming rules fleetwatch holds its metrics to (the ones `promtool check metrics`
 * lints, and a few more): one prefix, lower-case snake_case, counters end in `_total` and nothing
 * else does, base units spelled out as suffixes (`_seconds`, `_bytes`), no unit abbreviations, no
 * reserved label names. Returns one line per problem; empty when the name is fine.
 */

const NAME = /^[a-z][a-z0-9_]*$/;
const LABEL = /^[a-z][a-z0-9_]*$/;
/** Unit spellings that should be base units instead. */
const ABBREVIATED_UNITS = [
  'ms',
  'msec',
  'msecs',
  'millis',
  'milliseconds',
  'us',
  'microseconds',
  'ns',
  'nanoseconds',
  'sec',
  'secs',
  'minutes',
  'hours',
  'kb',
  'mb',
  'gb',
  'kilobytes',
  'megabytes',
  'percent',
  'pct',
];
const RESERVED_LABELS = new Set(['le', 'quantile']);

export function metricNameProblems(name: string, type: MetricType | string): string[] {
  const problems: string[] = [];
  if (!name.startsWith(METRIC_PREFIX)) problems.push(`${name}: does not start with ${METRIC_PREFIX}`);
  if (!NAME.test(name)) problems.push(`${name}: use lower-case letters, digits and _ only`);
  if (name.includes('__')) problems.push(`${name}: has a double underscore`);
  if (name.endsWith('_')) problems.push(`${name}: ends with _`);
  const isCounter = type === 'counter';
  if (isCounter && !name.endsWith('_total')) problems.push(`${name}: a counter must end in _total`);
  if (!isCounter && name.endsWith('_total')) problems.push(`${name}: only counters end in _total`);
  const words = name.split('_');
  for (const unit of ABBREVIATED_UNITS) {
    if (words.includes(unit))
      problems.push(`${name}: "${unit}" is not a base unit (use seconds, bytes, ratio)`);
  }
  if (type === 'histogram' && /_(count|sum|bucket)$/.test(name)) {
    problems.push(`${name}: a histogram name must not end in _count, _sum or _bucket`);
  }
  return problems;
}

export function labelNameProblems(metric: string, labels: readonly string[]): string[] {
  const problems: string[] = [];
  for (const label of labels) {
    if (!LABEL.test(label)) problems.push(`${metric}: label "${label}" must be lower-case snake_case`);
    if (label.startsWith('__')) problems.push(`${metric}: label "${label}" is reserved (starts with __)`);
    if (RESERVED_LABELS.has(label)) problems.push(`${metric}: label "${label}" is reserved`);
  }
  return problems;
}
