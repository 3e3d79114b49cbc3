import type { Registry } from 'prom-client';
import type { PollOutcome } from '../../src/pollers/outcome.js';

export type Labels = Record<string, string | number>;

export interface Sample {
  labels: Labels;
  value: number;
}

/** Every sample of one family (histograms: only the series named `name + suffix`). Runs `collect`. */
export async function samples(registry: Registry, name: string, suffix = ''): Promise<Sample[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name} in the registry`);
  const { values } = await metric.get();
  return values
    .filter((value) => ((value as { metricName?: string }).metricName ?? name) === `${name}${suffix}`)
    .map((value) => ({ labels: { ...value.labels } as Labels, value: value.value }));
}

function matches(labels: Labels, wanted: Labels): boolean {
  return Object.entries(wanted).every(([key, value]) => String(labels[key]) === String(value));
}

/** The value of the one sample whose labels include `labels`; undefined when there is none. */
export async function sampleValue(
  registry: Registry,
  name: string,
  labels: Labels = {},
  suffix = '',
): Promise<number | undefined> {
  const found = (await samples(registry, name, suffix)).filter((sample) => matches(sample.labels, labels));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** A histogram's observation count for `labels`. */
export function countOf(registry: Registry, name: string, labels: Labels = {}): Promise<number | undefined> {
  return sampleValue(registry, name, labels, '_count');
}

export function outcome(over: Partial<PollOutcome> & Pick<PollOutcome, 'poller' | 'tick'>): PollOutcome {
  return {
    shard: 0,
    offsetMs: 0,
    targets: 1,
    leaseHeld: 0,
    notDue: 0,
    observed: 1,
    failed: 0,
    committed: 0,
    unchanged: 1,
    events: 0,
    conflicts: 0,
    stale: 0,
    gaveUp: 0,
    ...over,
  };
}

/**
 * The value of one series in an exposition text, `series` written as `name{labels}` in the
 * exposition's label order but without the `installation` label every daemon adds (the config's
 * `installation`); undefined when absent.
 */
export function exposedValue(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    const bare = line
      .replace(/installation="[^"]*",?/, '')
      .replace(',}', '}')
      .replace('{}', '');
    if (bare.startsWith(`${series} `)) return Number(bare.slice(series.length + 1));
  }
  return undefined;
}
