import { naming } from '../events/detectors/define.js';
import { upstreamHealthDetector } from '../events/detectors/upstream-health.js';
import { countField } from '../lib/fields.js';
import { UPSTREAM_NAMES } from '../upstream/names.js';
import { definePoller } from './poller.js';
import { listSettings } from './settings.js';
import { upstreamRef } from './upstream-windows.js';

/**
 * The `upstream` poller judges the counting windows of upstream-windows.ts: the job of tick n
 * judges the closed window n - 1 of every upstream with the `upstream-health` detector, on the
 * `fleet` ref `upstream/<name>`; the observation time is the window's end, and a window is applied
 * at most once (the pipeline drops an observation not newer than the stored one).
 */

/**
 * `upstream`: the job of tick n judges window n - 1 (closed; scheduled a little after the tick
 * starts so every replica has flushed it) for each upstream. Its `interval` is the counting
 * window: request outcomes (all replicas together) are counted in fixed windows of `interval`,
 * and each closed window is judged by `detectors.upstream`.
 *
 * The default window (15 s) is short on purpose: a one-minute outage spans two rounds of the 30 s
 * per-entity pollers, so with `failure_threshold: 2` it is an upstream incident, judged within a
 * window and a quarter of its second failing round: before the per-entity rules (three failed
 * polls in a row) fire. A window without requests says nothing and keeps the streak.
 */
const UPSTREAM_WINDOW_DEFAULT_MS = 15_000;

export const upstreamPoller = definePoller({
  name: 'upstream',
  settings: listSettings(UPSTREAM_WINDOW_DEFAULT_MS).extend({
    /**
     * While an upstream is degraded, each per-entity poller of it polls only this many entities
     * per tick (its first shard's first ones) and leaves the rest as they were; 0: poll them all.
     * See degraded-upstreams.ts.
     */
    degraded_sample: countField(0, 10_000).default(20),
  }),
  // The judge of an outage must not queue behind the polls the outage makes slow.
  local: true,
  /** The jobs wait this long into their tick, so every replica has flushed its counts. */
  delayMs: (windowMs) => Math.min(5_000, Math.floor(windowMs / 4)),
  async poll(ctx) {
    await ctx.windows.flush();
    const window = ctx.job.tick - 1;
    const counts = await ctx.windows.read(window);
    const at = new Date((window + 1) * ctx.windows.windowMs).toISOString();
    for (const name of UPSTREAM_NAMES) {
      await ctx.commit(
        {
          poller: 'upstream',
          detector: naming(upstreamHealthDetector, 'upstream', name),
          options: ctx.detectors.upstreamHealth,
          strictlyNewer: true,
        },
        [{ ref: upstreamRef(name), observation: { ok: true, at, value: counts[name] } }],
      );
    }
  },
});
