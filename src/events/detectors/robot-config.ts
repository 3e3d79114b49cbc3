import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import { diffFingerprints, type Fingerprint, fingerprint, summarizeDiff } from '../structural-diff.js';
import type { EventDraft } from '../types.js';
import { defineDetector, isRecord } from './define.js';

/**
 * The robot's loaded configuration: active site (GET /v2/active_site), loaded route
 * (/v2/loaded_route) and loaded zone set (/v2/loaded_zone_set), each an opaque JSON document.
 *
 * One `robot.config.changed` per part whose stable hash (`stableHash`, sorted keys) changed, with
 * the previous and current hashes, a bounded structural diff of top-level paths and a one-line
 * summary for the notification. A part that is `undefined` in the value was not observed (its
 * poll failed or was skipped) and changes nothing; `null` is a real value (nothing loaded). Each
 * part's first observed value is its baseline. Only fingerprints are kept in the state, never the
 * documents, with the name each document goes by (`nameOf`) so that people see which site, route
 * or zone set is loaded rather than a hash. A failed observation changes nothing.
 */

export const CONFIG_PARTS = ['activeSite', 'loadedRoute', 'loadedZoneSet'] as const;
export type ConfigPart = (typeof CONFIG_PARTS)[number];

export interface RobotConfigValue {
  activeSite?: unknown;
  loadedRoute?: unknown;
  loadedZoneSet?: unknown;
}

/** One part as last observed: its fingerprint and the name of the document (see `nameOf`). */
export interface ConfigPartState extends Fingerprint {
  /** Absent in states written before names were kept; they gain one at the next observation. */
  name?: string | null;
}

export interface RobotConfigState {
  v: 1;
  parts: Record<ConfigPart, ConfigPartState | null>;
}

/** The longest name kept; a longer one is cut with `…`. */
export const MAX_CONFIG_NAME = 200;

/**
 * The name a loaded document goes by: its `name` field (sites, routes and zone sets carry one),
 * or the value itself when the robot answers with a bare string (such as `"none"`); null when
 * nothing is loaded or the document names nothing.
 */
export function nameOf(document: unknown): string | null {
  const name = isRecord(document) ? document.name : document;
  if (typeof name !== 'string') return null;
  return name.length > MAX_CONFIG_NAME ? `${name.slice(0, MAX_CONFIG_NAME - 1)}…` : name;
}

const fingerprintSchema = z.object({
  hash: z.string(),
  kind: z.enum(['object', 'array', 'scalar']),
  entries: z.array(z.tuple([z.string(), z.string()])).nullable(),
  name: z.string().nullable().optional(),
});

const stateSchema = z.object({
  v: z.literal(1),
  parts: z.object({
    activeSite: fingerprintSchema.nullable(),
    loadedRoute: fingerprintSchema.nullable(),
    loadedZoneSet: fingerprintSchema.nullable(),
  }),
});

const LABEL: Record<ConfigPart, string> = {
  activeSite: 'active site',
  loadedRoute: 'loaded route',
  loadedZoneSet: 'loaded zone set',
};

export const robotConfigDetector = defineDetector<RobotConfigState, RobotConfigValue, undefined, unknown>({
  initial: () => ({ v: 1, parts: { activeSite: null, loadedRoute: null, loadedZoneSet: null } }),
  state: stateSchema,
  onValue: (state, value) => {
    if (!isRecord(value)) return { state, events: [] };
    const parts = { ...state.parts };
    const events: EventDraft[] = [];
    for (const part of CONFIG_PARTS) {
      const document = Object.hasOwn(value, part) ? value[part] : undefined;
      if (document === undefined) continue;
      const previous = parts[part];
      const current = fingerprint(document, previous);
      parts[part] = { ...current, name: nameOf(document) };
      if (previous === null || previous.hash === current.hash) continue;
      const diff = diffFingerprints(previous, current);
      events.push(
        draft(EVENT.robotConfigChanged, {
          part,
          previous: previous.hash,
          current: current.hash,
          diff,
          summary: summarizeDiff(LABEL[part], diff),
        }),
      );
    }
    return { state: { v: 1, parts }, events };
  },
});
