import { z } from 'zod';
import type { FleetEvent } from '../../events/types.js';
import { formatDuration } from '../../lib/duration.js';
import { durationField, requiredText } from '../../lib/fields.js';
import { parseProblems } from '../../lib/issues.js';
import { canonicalJson } from '../../lib/stable-hash.js';
import { matchSchema } from '../routing/config.js';
import type { Tags } from '../routing/labels.js';
import { compileMatcher, type Matcher, type MatchSpec } from '../routing/matcher.js';

/**
 * Silences (Alertmanager's): an operator mutes what matches, for a while, and says who and why.
 * Matchers use the route matcher language (matcher.ts), so a silence on
 * `vehicle.vpn.disconnected` also mutes the vehicle's `vehicle.vpn.connected`. A silence is active
 * in `[startsAt, endsAt)`; expiring one sets `endsAt` to now. Silences are data (stored by the
 * caller); this module only validates and evaluates them.
 */
export interface Silence {
  id: string;
  matchers: MatchSpec;
  /** ISO 8601. */
  startsAt: string;
  /** ISO 8601, after `startsAt`. */
  endsAt: string;
  createdBy: string;
  comment: string;
}

export type SilenceState = 'pending' | 'active' | 'expired';

/**
 * A silence lasts at most a year and starts within a year: longer is a config change (a route or an
 * inhibition rule), or a typo that would otherwise mute for ever.
 */
export const MAX_SILENCE_MS = 365 * 86_400_000;
/** The shortest silence a `duration` makes. */
export const MIN_SILENCE_MS = 1_000;

const isoTime = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 time such as 2025-03-01T22:00:00Z',
});

const silenceMatchers = matchSchema.refine(
  (matchers) => Object.values(matchers).some((value) => value !== undefined),
  {
    error: 'must have at least one of type, severity, subject, tags (an empty silence would mute everything)',
  },
);

/** What an operator sends to create a silence: `endsAt` or `duration` (`2h`); `startsAt` defaults to now. */
export const silenceInputSchema = z
  .strictObject({
    matchers: silenceMatchers,
    startsAt: isoTime.optional(),
    endsAt: isoTime.optional(),
    // Kept as a due time and compared with the clock, never a timer.
    duration: durationField(MIN_SILENCE_MS, MAX_SILENCE_MS, { armsTimer: false }).optional(),
    createdBy: requiredText('must say who creates the silence'),
    comment: requiredText('must say why (a ticket, the work going on)'),
  })
  .superRefine((input, ctx) => {
    if (input.endsAt === undefined && input.duration === undefined) {
      ctx.addIssue({ code: 'custom', path: ['endsAt'], message: 'give endsAt or duration' });
    }
    if (input.endsAt !== undefined && input.duration !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['duration'], message: 'give endsAt or duration, not both' });
    }
    if (
      input.startsAt !== undefined &&
      input.endsAt !== undefined &&
      Date.parse(input.endsAt) <= Date.parse(input.startsAt)
    ) {
      ctx.addIssue({ code: 'custom', path: ['endsAt'], message: 'must be after startsAt' });
    }
  });

export type SilenceInput = z.input<typeof silenceInputSchema>;

/** Validates operator input into a silence, or says what is wrong (one line per field). */
export function createSilence(
  input: unknown,
  now: number,
  id: string,
): { ok: true; silence: Silence } | { ok: false; problems: string[] } {
  const parsed = parseProblems(silenceInputSchema, input);
  if (!parsed.ok) return parsed;
  const { matchers, createdBy, comment } = parsed.data;
  const startsAt = parsed.data.startsAt === undefined ? now : Math.max(Date.parse(parsed.data.startsAt), now);
  const endsAt =
    parsed.data.endsAt !== undefined
      ? Date.parse(parsed.data.endsAt)
      : startsAt + (parsed.data.duration ?? 0);
  if (endsAt <= now)
    return { ok: false, problems: ['endsAt: is in the past; the silence would never be active'] };
  const longest = formatDuration(MAX_SILENCE_MS);
  if (startsAt - now > MAX_SILENCE_MS) {
    return {
      ok: false,
      problems: [`startsAt: expected a time within ${longest} from now; got ${parsed.data.startsAt}`],
    };
  }
  if (endsAt - startsAt > MAX_SILENCE_MS) {
    return {
      ok: false,
      problems: [
        `endsAt: expected a time at most ${longest} after the start (a silence lasts at most ${longest}); got ${parsed.data.endsAt}`,
      ],
    };
  }
  return {
    ok: true,
    silence: {
      id,
      matchers: definedOnly(matchers),
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(endsAt).toISOString(),
      createdBy,
      comment,
    },
  };
}

function definedOnly(matchers: MatchSpec): MatchSpec {
  return Object.fromEntries(Object.entries(matchers).filter(([, value]) => value !== undefined)) as MatchSpec;
}

export function silenceState(silence: Silence, now: number): SilenceState {
  // A silence that ends when it starts never mutes: a pending one expired before it started
  // (`createSilence` refuses endsAt <= startsAt, so nothing else is stored so).
  if (Date.parse(silence.endsAt) <= Date.parse(silence.startsAt)) return 'expired';
  if (now < Date.parse(silence.startsAt)) return 'pending';
  return now < Date.parse(silence.endsAt) ? 'active' : 'expired';
}

/** The silences active at `now`. */
export function activeSilences(silences: readonly Silence[], now: number): Silence[] {
  return silences.filter((silence) => silenceState(silence, now) === 'active');
}

/** Ends a silence now (a pending one ends before it starts); an expired one is returned unchanged. */
export function expireSilence(silence: Silence, now: number): Silence {
  const state = silenceState(silence, now);
  if (state === 'expired') return silence;
  return { ...silence, endsAt: state === 'pending' ? silence.startsAt : new Date(now).toISOString() };
}

const matchers = new Map<string, Matcher>();

function matcherOf(silence: Silence): Matcher {
  const key = canonicalJson(silence.matchers);
  let matcher = matchers.get(key);
  if (!matcher) {
    matcher = compileMatcher(silence.matchers);
    if (matchers.size > 1_000) matchers.clear();
    matchers.set(key, matcher);
  }
  return matcher;
}

/** The first active silence that matches the event, if any. */
export function silencedBy(
  event: FleetEvent,
  tags: Tags,
  silences: readonly Silence[],
  now: number,
): Silence | undefined {
  return silences.find(
    (silence) => silenceState(silence, now) === 'active' && matcherOf(silence).matches(event, tags),
  );
}

export function isSilenced(
  event: FleetEvent,
  tags: Tags,
  silences: readonly Silence[],
  now: number,
): boolean {
  return silencedBy(event, tags, silences, now) !== undefined;
}
