/**
 * The longest delay Node's timers take (2^31 - 1 ms, about 24.8 days): a longer one fires after
 * 1 ms instead. Every duration that arms a timer is bounded below it (see `durationField`).
 */
export const TIMER_LIMIT_MS = 2 ** 31 - 1;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** Parses `250ms`, `30s`, `5m`, `1.5h`, `2d` into milliseconds; returns undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return Number.isFinite(value) ? Math.round(value) : undefined;
}

/** Renders milliseconds the way a person would write them in the config file. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', UNIT_MS.d],
    ['h', UNIT_MS.h],
    ['m', UNIT_MS.m],
    ['s', UNIT_MS.s],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
