import { z } from 'zod';
import { Prng } from './prng.js';
import type { FaultOptions, FaultScope } from './types.js';

const rate = z.number().min(0).max(1);
const scope = z.enum(['token', 'v1', 'robots', 'all']);

export const faultOptionsSchema = z
  .object({
    errorRates: z
      .record(z.string().regex(/^[45]\d\d$/, { error: 'status codes must be 400-599' }), rate)
      .optional(),
    latencyMs: z.number().int().min(0).max(600_000).optional(),
    latencyJitterMs: z.number().int().min(0).max(600_000).optional(),
    timeoutRate: rate.optional(),
    malformedRate: rate.optional(),
    slowBodyRate: rate.optional(),
    slowBodyMs: z.number().int().min(1).max(600_000).optional(),
    scope: z.union([scope, z.array(scope).min(1)]).optional(),
    targets: z.array(z.string().min(1)).optional(),
  })
  .strict();

export type Surface = Exclude<FaultScope, 'all'>;

export interface FaultDecision {
  delayMs: number;
  /** 'none', hold the request open, or answer with this status instead of running the operation. */
  outcome: 'none' | 'timeout' | number;
  /** Run the operation but truncate the JSON body of the answer. */
  malformed: boolean;
  /** Run the operation, send the headers, then trickle the body out over this long (0: at once). */
  slowBodyMs: number;
}

const NO_FAULT: FaultDecision = { delayMs: 0, outcome: 'none', malformed: false, slowBodyMs: 0 };
export const DEFAULT_SLOW_BODY_MS = 10_000;

/** Decides per request which fault (if any) applies. Seeded so a run is reproducible. */
export class FaultInjector {
  private options: FaultOptions = {};
  private rates: Array<[number, number]> = [];
  private scopes = new Set<FaultScope>(['all']);
  private targets: Set<string> | null = null;
  private active = false;
  private readonly prng: Prng;

  constructor(seed: number) {
    this.prng = new Prng(seed);
  }

  /** Validates and replaces the fault set; throws a ZodError on bad input. */
  set(options: FaultOptions): FaultOptions {
    const parsed = faultOptionsSchema.parse(options) as FaultOptions;
    this.options = parsed;
    this.rates = Object.entries(parsed.errorRates ?? {})
      .map(([status, p]) => [Number(status), p ?? 0] as [number, number])
      .filter(([, p]) => p > 0)
      .sort((a, b) => a[0] - b[0]);
    const s = parsed.scope ?? 'all';
    this.scopes = new Set(Array.isArray(s) ? s : [s]);
    this.targets = parsed.targets ? new Set(parsed.targets) : null;
    this.active =
      this.rates.length > 0 ||
      (parsed.latencyMs ?? 0) > 0 ||
      (parsed.latencyJitterMs ?? 0) > 0 ||
      (parsed.timeoutRate ?? 0) > 0 ||
      (parsed.malformedRate ?? 0) > 0 ||
      (parsed.slowBodyRate ?? 0) > 0;
    return this.get();
  }

  get(): FaultOptions {
    return structuredClone(this.options);
  }

  /**
   * @param target the vehicle id / device id addressed, if any
   * @param allowed statuses the surface may answer with (the spec's list for a /v1 operation); null = any
   */
  decide(surface: Surface, target: string | undefined, allowed: ReadonlySet<number> | null): FaultDecision {
    if (!this.active) return NO_FAULT;
    if (!this.scopes.has('all') && !this.scopes.has(surface)) return NO_FAULT;
    if (this.targets && (target === undefined || !this.targets.has(target))) return NO_FAULT;
    const o = this.options;
    const jitter = o.latencyJitterMs ? this.prng.next() * o.latencyJitterMs : 0;
    const delayMs = Math.round((o.latencyMs ?? 0) + jitter);
    let outcome: FaultDecision['outcome'] = 'none';
    if (o.timeoutRate && this.prng.chance(o.timeoutRate)) {
      outcome = 'timeout';
    } else if (this.rates.length > 0) {
      // One draw across all statuses, so rates add up (and a total of 1 always fails).
      let r = this.prng.next();
      for (const [status, p] of this.rates) {
        if (allowed && !allowed.has(status)) continue;
        if (r < p) {
          outcome = status;
          break;
        }
        r -= p;
      }
    }
    const malformed = outcome === 'none' && !!o.malformedRate && this.prng.chance(o.malformedRate);
    // Drawn last, and only when asked for, so the draws of seeded runs without it stay the same.
    const slow = outcome === 'none' && !malformed && !!o.slowBodyRate && this.prng.chance(o.slowBodyRate);
    return { delayMs, outcome, malformed, slowBodyMs: slow ? (o.slowBodyMs ?? DEFAULT_SLOW_BODY_MS) : 0 };
  }
}
