/**
 * What a link may fill in on the New silence form, so a chat message or the Incidents page can
 * offer "silence this": `#/silences/new?matchers=type%3Dvehicle.vpn.*&matchers=subject%3D…
 * &comment=…&duration=2h`. Each `matchers` is one `label=value` line of the form (a value may
 * also hold several lines); `type`, `subject` and `severity` are read as lines of their own label.
 * Only the form is filled: the person reads it, says why, and creates the silence.
 *
 * Bounded: at most `PREFILL_LIMITS.lines` lines of at most `PREFILL_LIMITS.line` characters, a
 * comment of at most `PREFILL_LIMITS.comment`; the rest of a longer link is left out.
 */

export interface SilencePrefill {
  /** The Matchers field: one `label=value` a line. */
  matchers: string;
  comment: string;
  duration: string;
}

export const PREFILL_LIMITS = { lines: 50, line: 500, comment: 1_000 } as const;

export const DEFAULT_SILENCE_DURATION = '2h';

const LABELS = ['type', 'subject', 'severity'] as const;

export function silencePrefill(query: URLSearchParams): SilencePrefill {
  const lines = [
    ...query.getAll('matchers').flatMap((value) => value.split('\n')),
    ...LABELS.flatMap((label) => query.getAll(label).map((value) => `${label}=${value}`)),
  ]
    .map((line) => line.trim())
    .filter((line) => line !== '' && line.length <= PREFILL_LIMITS.line)
    .slice(0, PREFILL_LIMITS.lines);
  return {
    matchers: [...new Set(lines)].join('\n'),
    comment: (query.get('comment') ?? '').trim().slice(0, PREFILL_LIMITS.comment),
    duration: query.get('duration')?.trim() || DEFAULT_SILENCE_DURATION,
  };
}
