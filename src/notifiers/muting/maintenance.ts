import type { FleetEvent } from '../../events/types.js';
import type { Tags } from '../routing/labels.js';
import { compileMatcher, type Matcher } from '../routing/matcher.js';
import type { MaintenanceConfig } from './config.js';
import { type CronSchedule, earliestFireAfter, latestFireAtOrBefore, parseCron } from './cron.js';

/**
 * Maintenance windows: recurring, time-based mutes (Alertmanager's mute time intervals). A window
 * opens at every fire time of its cron `schedule` in `time_zone` and stays open for `duration`
 * (elapsed time): it covers `[fire, fire + duration)`. Daylight saving time: see cron.ts — a fire
 * time in the spring-forward gap opens the window when the clock jumps; a fire time in the
 * repeated autumn hour opens it once. A window with `match` mutes only matching events; without,
 * everything.
 */
export interface MaintenanceWindow {
  name: string;
  schedule: CronSchedule;
  durationMs: number;
  timeZone: string;
  matcher: Matcher;
}

/** Compiles the `maintenance` section once (cron parsed, globs compiled). */
export function compileMaintenance(windows: readonly MaintenanceConfig[]): MaintenanceWindow[] {
  return windows.map((window) => ({
    name: window.name,
    schedule: parseCron(window.schedule),
    durationMs: window.duration,
    timeZone: window.time_zone,
    matcher: compileMatcher(window.match),
  }));
}

/** The occurrence of the window open at `now` (epoch ms), if any. */
export function openOccurrence(
  window: MaintenanceWindow,
  now: number,
): { startsAt: number; endsAt: number } | undefined {
  const start = latestFireAtOrBefore(window.schedule, window.timeZone, now, now - window.durationMs + 1);
  return start === undefined ? undefined : { startsAt: start, endsAt: start + window.durationMs };
}

/** How far ahead `nextOccurrence` looks: a schedule that fires rarer than this has no next one. */
export const NEXT_OCCURRENCE_HORIZON_MS = 400 * 86_400_000;

/** The next occurrence of the window that opens after `now` (within 400 days), if any. */
export function nextOccurrence(
  window: MaintenanceWindow,
  now: number,
): { startsAt: number; endsAt: number } | undefined {
  const start = earliestFireAfter(window.schedule, window.timeZone, now, now + NEXT_OCCURRENCE_HORIZON_MS);
  return start === undefined ? undefined : { startsAt: start, endsAt: start + window.durationMs };
}

/** The name of the first open window that matches the event, or undefined. */
export function inMaintenance(
  event: FleetEvent,
  tags: Tags,
  windows: readonly MaintenanceWindow[],
  now: number,
): string | undefined {
  for (const window of windows) {
    if (window.matcher.matches(event, tags) && openOccurrence(window, now)) return window.name;
  }
  return undefined;
}
