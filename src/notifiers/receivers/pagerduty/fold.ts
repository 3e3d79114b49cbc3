import { describeEvents } from '../../../events/describe.js';
import { highestSeverity } from '../../../events/severity.js';
import type { FleetEvent } from '../../../events/types.js';
import { consolePageUrl, type Notification } from '../../notifier.js';
import {
  boundedSummary,
  changeTrigger,
  dedupKey,
  type IncidentSteps,
  incidentEvents,
  installationOf,
  kindOf,
  type PlannedEvent,
  type PlanOptions,
  type Step,
  stepsOf,
} from './events.js';

/**
 * A storm as one PagerDuty alert (pure). One alert per incident is right until a site goes dark:
 * 3,000 robots down are 3,000 pages, and at PagerDuty's 120 events a minute they take 25 minutes
 * to send while the receiver's later notifications wait. So when a notification brings more than
 * `fold_above` incidents that are new to PagerDuty, they are folded into one alert of the group
 * (`<installation>/group/<receiver>/<group key>`), and the receiver remembers which incidents it
 * folded (`fold-store.ts`):
 *
 * | in the notification | PagerDuty event |
 * |---|---|
 * | more than `fold_above` incidents firing that PagerDuty has no alert for | one `trigger` of the group alert: `300 robots fail their health check: 300 incidents in this alert` |
 * | new incidents while the group's alert is open (the rest of the storm) | folded into it: the group alert triggered again, with its new count |
 * | a reminder of folded incidents | the group alert triggered again (a reminder folds nothing new: its incidents are PagerDuty's already) |
 * | a folded incident resolving | nothing, until it is the group alert's last: then its `resolve` |
 * | an acknowledgement of a folded incident | nothing (PagerDuty knows the group alert only) |
 * | more than `fold_above` changes (events of no incident) | one `trigger` for them all, under the notification's id |
 *
 * Everything else goes as `events.ts` plans it, alert by alert; with nothing to fold the plan is
 * `planEvents`'s, event for event.
 *
 * At least once, like every delivery: the incidents are recorded as folded after the notification's
 * own alerts went and before the group alert is sent (`fold`), and forgotten only once every event
 * went (`release`). A notification sent again after a failure is planned from that record: a
 * folded incident is not sent alone again, and the group alert is triggered or resolved again,
 * which PagerDuty deduplicates.
 */

export interface FoldState {
  /** Incident dedup key → the dedup key of the group alert it is folded into. */
  foldedInto: ReadonlyMap<string, string>;
  /** Group alert dedup key → how many incidents are folded into it. */
  counts: ReadonlyMap<string, number>;
}

export const NO_FOLDS: FoldState = { foldedInto: new Map(), counts: new Map() };

export interface FoldOptions extends PlanOptions {
  /** More new incidents (or changes) than this in one notification are folded into one alert. */
  foldAbove: number;
}

export interface FoldPlan {
  /** The notification's own alerts, sent first. */
  alerts: PlannedEvent[];
  /** Incidents to record as folded after `alerts` went: group alert key → incident dedup keys. */
  fold: Map<string, string[]>;
  /** The group alerts' events, sent after the fold is recorded. */
  groups: PlannedEvent[];
  /** Incidents to forget once every event went: group alert key → incident dedup keys. */
  release: Map<string, string[]>;
}

/** Incident ids listed in a group alert's details; the count says how many there are. */
export const LISTED_INCIDENTS = 100;

/** The dedup key of this notification's group alert. */
export function groupAlertKey(notification: Notification): string {
  const first = notification.events[0];
  const name = `group/${notification.receiver}/${notification.groupKey}`;
  return first ? dedupKey(first, name) : name;
}

/** `type=robot.offline, site=north`, or the group key when the route groups by nothing. */
function groupLabel(notification: Notification): string {
  const labels = Object.entries(notification.groupLabels).map(([name, value]) => `${name}=${value}`);
  return labels.length > 0 ? labels.join(', ') : notification.groupKey;
}

/** The one value every event has (the kind, the type), or `several`. */
function common(events: readonly FleetEvent[], of: (event: FleetEvent) => string): string {
  const values = new Set(events.map(of));
  return values.size === 1 ? (values.values().next().value ?? 'several') : 'several';
}

function latest(events: readonly FleetEvent[]): string {
  let time = '';
  for (const event of events) if (event.time > time) time = event.time;
  return time;
}

/** One trigger standing for many events, under `key`. */
function foldedTrigger(
  notification: Notification,
  key: string,
  events: readonly FleetEvent[],
  summary: string,
  details: Record<string, unknown>,
  options: PlanOptions,
): PlannedEvent {
  const first = events[0];
  return {
    event_action: 'trigger',
    dedup_key: key,
    payload: {
      summary: boundedSummary(summary),
      source: `group ${groupLabel(notification)}`,
      severity: options.severityMap[highestSeverity(events, 'info')],
      timestamp: latest(events),
      component: common(events, (event) => kindOf(event.subject)),
      group: first ? installationOf(first) : '',
      class: common(events, (event) => event.type),
      custom_details: {
        group: notification.groupKey,
        group_labels: notification.groupLabels,
        ...details,
      },
    },
    client: 'fleetwatch',
    ...(options.consoleUrl === undefined
      ? {}
      : {
          client_url: options.consoleUrl,
          links: [
            { href: consolePageUrl(options.consoleUrl, 'incidents'), text: 'open incidents in fleetwatch' },
          ],
        }),
  };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The PagerDuty events of a notification, with storms folded into one alert per group. `steps`
 * are the notification's (`stepsOf`), passed in when the caller has them already.
 */
export function planFolded(
  notification: Notification,
  options: FoldOptions,
  state: FoldState,
  steps: readonly Step[] = stepsOf(notification),
): FoldPlan {
  const own = groupAlertKey(notification);
  const release = new Map<string, string[]>();
  /** Group alert → the incidents folded into it that fire in this notification. */
  const firing = new Map<string, Array<{ id: string; event: FleetEvent }>>();
  const candidates: IncidentSteps[] = [];
  const changes: FleetEvent[] = [];
  for (const step of steps) {
    if (step.kind === 'change') {
      if (options.changes === 'trigger') changes.push(step.event);
      continue;
    }
    const { steps: incident } = step;
    const into = state.foldedInto.get(incident.dedupKey);
    // A folded incident that fires at the end of the notification (again, or after resolving
    // within it) stays folded; one that ends resolved leaves its group alert.
    if (into !== undefined) {
      if (incident.trigger) push(firing, into, { id: incident.id, event: incident.trigger });
      else if (incident.resolve) push(release, into, incident.dedupKey);
    } else if (incident.trigger) candidates.push(incident);
  }
  const released = (key: string) => release.get(key)?.length ?? 0;
  const openAfterRelease = (state.counts.get(own) ?? 0) - released(own);
  // A reminder repeats incidents PagerDuty already has, alone or folded: it folds nothing new.
  const foldNew =
    notification.reminder === undefined &&
    (candidates.length > options.foldAbove || (candidates.length > 0 && openAfterRelease > 0));
  const foldChanges = changes.length > options.foldAbove;

  const alerts: PlannedEvent[] = [];
  for (const step of steps) {
    if (step.kind === 'change') {
      const change = foldChanges ? undefined : changeTrigger(step.event, options);
      if (change) alerts.push(change);
      continue;
    }
    const { steps: incident } = step;
    if (state.foldedInto.has(incident.dedupKey)) continue;
    if (foldNew && incident.trigger) {
      // It resolved and fired again: the resolve closes its own alert, the firing is folded.
      if (incident.resolve) alerts.push({ event_action: 'resolve', dedup_key: incident.dedupKey });
      continue;
    }
    alerts.push(...incidentEvents(incident, options));
  }

  const fold = new Map<string, string[]>();
  if (foldNew) {
    fold.set(
      own,
      candidates.map((incident) => incident.dedupKey),
    );
    for (const { id, trigger } of candidates) if (trigger) push(firing, own, { id, event: trigger });
  }
  const groups: PlannedEvent[] = [];
  for (const key of new Set([...release.keys(), ...firing.keys()])) {
    const open = (state.counts.get(key) ?? 0) - released(key) + (fold.get(key)?.length ?? 0);
    const fired = firing.get(key) ?? [];
    if (open <= 0) {
      if (released(key) > 0) groups.push({ event_action: 'resolve', dedup_key: key });
      continue;
    }
    if (fired.length === 0) continue;
    const events = fired.map((incident) => incident.event);
    groups.push(
      foldedTrigger(
        notification,
        key,
        events,
        `${describeEvents(events)}: ${open} ${open === 1 ? 'incident' : 'incidents'} in this alert`,
        {
          open_incidents: open,
          incidents: fired.slice(0, LISTED_INCIDENTS).map((incident) => incident.id),
          ...(fired.length > LISTED_INCIDENTS ? { more_incidents: fired.length - LISTED_INCIDENTS } : {}),
        },
        options,
      ),
    );
  }
  if (foldChanges) {
    const first = changes[0];
    groups.push(
      foldedTrigger(
        notification,
        first ? dedupKey(first, `event/${notification.id}`) : notification.id,
        changes,
        describeEvents(changes),
        {
          events: changes.slice(0, LISTED_INCIDENTS).map((event) => event.id),
          ...(changes.length > LISTED_INCIDENTS ? { more_events: changes.length - LISTED_INCIDENTS } : {}),
        },
        options,
      ),
    );
  }
  return { alerts, fold, groups, release };
}
