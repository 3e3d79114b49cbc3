import { EVENT, findEntry } from '../../../events/catalogue.js';
import { describeEvent } from '../../../events/describe.js';
import { incidentRefOf, incidentStart } from '../../../events/incident-ref.js';
import { maxSeverity, severityOf } from '../../../events/severity.js';
import type { FleetEvent, Severity } from '../../../events/types.js';
import { consolePageUrl, type Notification } from '../../notifier.js';

/**
 * Notifications as Alertmanager alerts (pure). One alert per incident, labelled as Prometheus
 * would label it, so Alertmanager's grouping, silences and inhibition rules work on fleetwatch's
 * incidents as on any rule's alerts:
 *
 * | label | value |
 * |---|---|
 * | `alertname` | the incident's firing type (`vehicle.vpn.disconnected`), also on its resolution; the event type for an event of no incident |
 * | `subject` | `vehicle/veh-0003` |
 * | `severity` | `info`, `warning`, `critical`: the firing event's |
 * | `installation` | from the event's source `fleetwatch/<installation>` |
 * | entity tags | those the notification's group labels carry (`group_by` a tag) |
 *
 * Annotations: `summary` (the event's sentence), `description` (what the type means, from the
 * catalogue), `console` (the entity's page, with `console.url`), `acknowledged` (who, until when,
 * why) while an acknowledgement lasts, `resolution` (the resolving event's sentence).
 *
 * Firing alerts are sent with an `endsAt` one resolve window ahead and pushed again before it
 * passes (Prometheus's way): an alert whose fleetwatch is gone ends by itself. A resolution is
 * kept (`keepUntil`) and pushed again for a window too, so a peer that missed it, or a re-send
 * that crossed it, is corrected. An event of no incident fires once and ends a window later.
 */

/** The alert as `POST /api/v2/alerts` takes it. */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
}

/** What the receiver keeps of an incident's alert (the value of its Redis hash, as JSON). */
export interface StoredAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  generatorURL?: string;
  /** Epoch ms of the latest firing event applied: an older one (a replay) changes nothing. */
  firedAt: number;
  /** Set once resolved: the time it ended. */
  endsAt?: string;
  /** Epoch ms until which a resolved alert is pushed again; then it is dropped. */
  keepUntil?: number;
  /** The latest acknowledgement; shown while `until` (epoch ms) has not passed. */
  ack?: { by: string; comment: string; until: number };
}

export interface AlertContext {
  /** Epoch ms. */
  now: number;
  /** How far ahead a firing alert's `endsAt` is, and how long a resolution is pushed again. */
  windowMs: number;
  consoleUrl?: string | undefined;
}

/** What a notification comes to: the alerts to post, and the stored alerts that changed. */
export interface AlertPlan {
  alerts: PostableAlert[];
  /** By incident id (`<subject>#<key>`): the new stored record. */
  writes: Map<string, StoredAlert>;
}

/** routing/labels.ts's built-in labels: a group label of any other name is an entity tag. */
const EVENT_LABELS = new Set(['type', 'subject', 'severity', 'kind', 'incident']);
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REMOVED = new Set<string>([EVENT.vehicleRemoved, EVENT.robotRemoved]);
const ENTITY_PAGES = new Set(['vehicle', 'robot']);
const INSTALLATION_SOURCE = 'fleetwatch/';

/** The subject whose stored alerts an event closes all at once (a removed vehicle or robot). */
export function removedSubject(event: FleetEvent): string | undefined {
  return REMOVED.has(event.type) ? event.subject : undefined;
}

/** The incident ids a notification's events name, for loading what is stored of them. */
export function incidentIds(notification: Notification): string[] {
  const ids = new Set<string>();
  for (const event of notification.events) {
    const ref = incidentRefOf(event);
    if (ref) ids.add(ref.id);
  }
  return [...ids];
}

/** The entity tags among the group labels (`group_by: [site]` → `site`), empty values left out. */
export function tagLabels(groupLabels: Readonly<Record<string, string>>): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const [name, value] of Object.entries(groupLabels)) {
    if (!EVENT_LABELS.has(name) && LABEL_NAME.test(name) && value !== '') tags[name] = value;
  }
  return tags;
}

export function installationOf(source: string): string | undefined {
  if (!source.startsWith(INSTALLATION_SOURCE)) return undefined;
  const name = source.slice(INSTALLATION_SOURCE.length);
  return name === '' ? undefined : name;
}

/** The console page of a subject: a vehicle's or robot's own page, else the Incidents page. */
export function consoleLinkOf(subject: string, consoleUrl: string | undefined): string | undefined {
  if (consoleUrl === undefined) return undefined;
  const slash = subject.indexOf('/');
  const kind = subject.slice(0, Math.max(0, slash));
  const id = subject.slice(slash + 1);
  return ENTITY_PAGES.has(kind) && id !== ''
    ? consolePageUrl(consoleUrl, kind, id)
    : consolePageUrl(consoleUrl, 'incidents');
}

function labelsOf(
  event: FleetEvent,
  alertname: string,
  severity: Severity,
  tags: Record<string, string>,
): Record<string, string> {
  const installation = installationOf(event.source);
  // Tags first: a tag named like one of ours (`alertname`, `installation`) never replaces it.
  return {
    ...tags,
    alertname,
    subject: event.subject,
    severity,
    ...(installation === undefined ? {} : { installation }),
  };
}

function annotationsOf(event: FleetEvent, type: string): Record<string, string> {
  const description = findEntry(type)?.description;
  return { summary: describeEvent(event), ...(description ? { description } : {}) };
}

function withLink(
  annotations: Record<string, string>,
  link: string | undefined,
): { annotations: Record<string, string>; generatorURL?: string } {
  return link === undefined
    ? { annotations }
    : { annotations: { ...annotations, console: link }, generatorURL: link };
}

/** The later of two ISO times (an alert may not end before it starts: Alertmanager answers 400). */
function notBefore(at: string, start: string): string {
  return Date.parse(at) >= Date.parse(start) ? at : start;
}

function timeOf(event: FleetEvent, context: AlertContext): number {
  const at = Date.parse(event.time);
  return Number.isFinite(at) ? at : context.now;
}

/**
 * The alerts of one notification, given what is stored of its incidents (and, for a removed
 * entity, of every incident of its subject). Events are applied oldest first; each incident's
 * alert is posted once, as it stands after the last of them.
 */
export function planAlerts(
  notification: Notification,
  stored: ReadonlyMap<string, StoredAlert>,
  context: AlertContext,
): AlertPlan {
  const state = new Map(stored);
  const touched = new Set<string>();
  const once: PostableAlert[] = [];
  const tags = tagLabels(notification.groupLabels);
  const resolve = (id: string, current: StoredAlert, event: FleetEvent, extra: Record<string, string>) => {
    state.set(id, {
      ...current,
      annotations: { ...current.annotations, ...extra },
      endsAt: notBefore(event.time, current.startsAt),
      keepUntil: context.now + context.windowMs,
    });
    touched.add(id);
  };

  for (const event of notification.events) {
    const ref = incidentRefOf(event);
    const at = timeOf(event, context);
    if (ref === undefined) {
      const subject = removedSubject(event);
      if (subject !== undefined) {
        for (const [id, current] of state) {
          const closes = current.endsAt === undefined && current.labels.subject === subject;
          if (closes) resolve(id, current, event, { resolution: describeEvent(event) });
        }
      }
      once.push(oneOff(event, tags, context));
      continue;
    }
    const current = state.get(ref.id);
    if (ref.role === 'fires') {
      // A firing event from before the incident's resolution (a replayed dead letter) is history.
      if (current?.endsAt !== undefined && at <= Date.parse(current.endsAt)) continue;
      const firing = current !== undefined && current.endsAt === undefined;
      if (firing && at < current.firedAt) {
        touched.add(ref.id); // older than what was pushed: pushed again as it stands
        continue;
      }
      const link = withLink(
        annotationsOf(event, event.type),
        consoleLinkOf(event.subject, context.consoleUrl),
      );
      state.set(ref.id, {
        labels: firing ? current.labels : labelsOf(event, ref.firing, severityOf(event), tags),
        startsAt: firing ? current.startsAt : incidentStart(event),
        ...link,
        firedAt: firing ? Math.max(current.firedAt, at) : at,
        ...(firing && current.ack ? { ack: current.ack } : {}),
      });
      touched.add(ref.id);
    } else if (ref.role === 'resolves') {
      const resolution = { resolution: describeEvent(event) };
      if (current === undefined) {
        // Never pushed (or forgotten): the alert as its firing would have been, closed at once.
        const firingSeverity = findEntry(ref.firing)?.severity ?? 'info';
        const link = withLink(
          annotationsOf(event, ref.firing),
          consoleLinkOf(event.subject, context.consoleUrl),
        );
        resolve(
          ref.id,
          {
            labels: labelsOf(event, ref.firing, maxSeverity(severityOf(event), firingSeverity), tags),
            startsAt: incidentStart(event),
            ...link,
            firedAt: at,
          },
          event,
          resolution,
        );
      } else if (current.endsAt === undefined) {
        resolve(ref.id, current, event, resolution);
      } else {
        touched.add(ref.id); // resolved already: posted again as it is (a retry of this notification)
      }
    } else if (current !== undefined && current.endsAt === undefined) {
      // An acknowledgement creates no alert: it annotates the incident's alert while it lasts.
      const ack = acknowledgementOf(event);
      if (ack) {
        state.set(ref.id, { ...current, ack });
        touched.add(ref.id);
      }
    }
  }

  const writes = new Map<string, StoredAlert>();
  const alerts: PostableAlert[] = [];
  for (const id of touched) {
    const alert = state.get(id);
    if (!alert) continue;
    writes.set(id, alert);
    alerts.push(postable(alert, context));
  }
  return { alerts: [...alerts, ...once], writes };
}

function acknowledgementOf(event: FleetEvent): StoredAlert['ack'] | undefined {
  const { by, comment, until } = event.data;
  const end = typeof until === 'string' ? Date.parse(until) : Number.NaN;
  if (typeof by !== 'string' || typeof comment !== 'string' || !Number.isFinite(end)) return undefined;
  return { by, comment, until: end };
}

/** An event of no incident: an alert that fires once and ends a window later. */
function oneOff(event: FleetEvent, tags: Record<string, string>, context: AlertContext): PostableAlert {
  const link = withLink(annotationsOf(event, event.type), consoleLinkOf(event.subject, context.consoleUrl));
  return {
    labels: labelsOf(event, event.type, severityOf(event), tags),
    ...link,
    startsAt: event.time,
    endsAt: notBefore(new Date(context.now + context.windowMs).toISOString(), event.time),
  };
}

/**
 * A stored alert as it is posted now: a firing one ends a window from now (unless pushed again),
 * a resolved one at its end; the acknowledgement shows while it lasts.
 */
export function postable(alert: StoredAlert, context: Pick<AlertContext, 'now' | 'windowMs'>): PostableAlert {
  const annotations = { ...alert.annotations };
  if (alert.ack && alert.ack.until > context.now) {
    const until = new Date(alert.ack.until).toISOString();
    annotations.acknowledged = `by ${alert.ack.by} until ${until}: ${alert.ack.comment}`;
  }
  const endsAt =
    alert.endsAt ?? notBefore(new Date(context.now + context.windowMs).toISOString(), alert.startsAt);
  return {
    labels: alert.labels,
    annotations,
    startsAt: alert.startsAt,
    endsAt,
    ...(alert.generatorURL === undefined ? {} : { generatorURL: alert.generatorURL }),
  };
}

/** A stored alert read back from Redis; undefined for anything that is not one (left alone). */
export function parseStoredAlert(text: string | null | undefined): StoredAlert | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Partial<StoredAlert>;
    if (
      typeof value !== 'object' ||
      value === null ||
      typeof value.labels !== 'object' ||
      typeof value.annotations !== 'object' ||
      typeof value.startsAt !== 'string' ||
      typeof value.firedAt !== 'number'
    ) {
      return undefined;
    }
    return value as StoredAlert;
  } catch {
    return undefined;
  }
}
