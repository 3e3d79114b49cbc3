import './entity.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Confirm } from '../components/confirm.js';
import { ErrorLine } from '../components/error-line.js';
import { Time } from '../components/time-cell.js';
import { ApiError, api } from '../lib/api.js';
import { sayEvent } from '../lib/event-tail.js';
import { type EntityBase, type EntityKind, entityPath } from '../lib/fleet.js';
import { href } from '../lib/router.js';
import { type Access, mayOperate } from '../lib/session.js';
import { followEvents, type StreamState } from '../lib/stream.js';
import { age } from '../lib/time.js';
import { type Loaded, useApi } from '../lib/use-api.js';

/**
 * What the vehicle and robot pages share: the entity's view read again after each of its events
 * (`useEntity`), the page's frame (`EntityFrame`: heading, the readings beside the actions, open
 * incidents, timeline), the readings every entity has (`LastReadings`), the event timeline
 * (newest first, paged back, live), its open incidents, and an action button that is confirmed
 * before it calls the API and is disabled, saying which role it needs, for a session that may
 * not operate.
 */

export const TIMELINE_PAGE = 50;
/** Live additions kept on top of the loaded pages, at most. */
export const TIMELINE_MAX = 1_000;

export interface LoggedEvent {
  streamId: string;
  event: {
    id: string;
    type: string;
    subject: string;
    time: string;
    data: { severity?: string; previous?: unknown; current?: unknown; [key: string]: unknown };
  };
  muted?: { reason: string; by: string };
  /** The sentence fleetwatch says the event in. */
  summary?: string;
}

interface EventPage {
  items: LoggedEvent[];
}

/**
 * The subject's events on the stream, for the page to refresh its snapshot on; the timeline
 * below shows them.
 */
export function useSubjectStream(subject: string, onEvent: (event: LoggedEvent) => void): StreamState {
  const [state, setState] = useState<StreamState>('connecting');
  useEffect(
    () =>
      followEvents(
        { subject },
        (event) =>
          onEvent({
            streamId: event.streamId,
            event: {
              id: event.id,
              type: event.type,
              subject: event.subject,
              time: event.time,
              data: event.data,
            },
            ...(event.summary === undefined ? {} : { summary: event.summary }),
          }),
        setState,
      ),
    [subject],
  );
  return state;
}

export function Timeline({ subject, live }: { subject: string; live: LoggedEvent[] }) {
  const [older, setOlder] = useState<LoggedEvent[]>([]);
  const [more, setMore] = useState(true);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();

  const load = async (before: string | undefined) => {
    setLoading(true);
    try {
      const page = await api<EventPage>('/api/events', { query: { subject, limit: TIMELINE_PAGE, before } });
      setOlder((previous) => [...previous, ...page.items.slice().reverse()]);
      setMore(page.items.length === TIMELINE_PAGE);
      setError(undefined);
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    setOlder([]);
    setMore(true);
    void load(undefined);
  }, [subject]);

  // Live events first (newest on top), then the loaded pages, each event once.
  const seen = new Set<string>();
  const rows = [...live, ...older].filter((item) => {
    if (seen.has(item.streamId)) return false;
    seen.add(item.streamId);
    return true;
  });
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <ErrorLine error={error} />
      {rows.length === 0 && !loading ? <p class="hint">No events for {subject} in the log.</p> : null}
      {rows.length > 0 ? (
        <table class="timeline" aria-labelledby="timeline-title">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">What</th>
              <th scope="col" class="wide-only">
                Severity
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ streamId, event, muted, summary }) => (
              <tr key={streamId}>
                <td>
                  <Time iso={event.time} />
                </td>
                <td class="mono">{event.type}</td>
                <td>
                  {sayEvent({ data: event.data, ...(summary === undefined ? {} : { summary }) }, 2)}
                  {muted ? <span class="hint"> · {muted.reason}</span> : null}
                </td>
                <td class={`wide-only severity-${event.data.severity ?? 'info'}`}>
                  {event.data.severity ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {more ? (
        <button type="button" disabled={loading} onClick={() => load(older.at(-1)?.streamId)}>
          {loading ? 'Loading…' : 'Older events'}
        </button>
      ) : null}
    </section>
  );
}

interface IncidentItem {
  id: string;
  type: string;
  severity: string;
  since: string;
  acknowledged: boolean;
  muted: { reason: string } | null;
}

export function OpenIncidents({ subject, version }: { subject: string; version: number }) {
  const incidents = useApi(
    (signal) => api<{ items: IncidentItem[] }>('/api/incidents', { query: { subject }, signal }),
    [subject, version],
  );
  return (
    <section aria-labelledby="incidents-title">
      <h2 id="incidents-title">Open incidents</h2>
      <ErrorLine error={incidents.error} />
      {incidents.value?.items.length === 0 ? <p class="hint">None.</p> : null}
      <ul class="incidents">
        {incidents.value?.items.map((incident) => (
          <li key={incident.id}>
            <a href={href('incidents', incident.id)} class={`severity-${incident.severity}`}>
              {incident.type}
            </a>{' '}
            since <Time iso={incident.since} /> <span class="hint">({age(incident.since)})</span>
            {incident.acknowledged ? <span class="hint"> · acknowledged</span> : null}
            {incident.muted ? <span class="hint"> · {incident.muted.reason}</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The line under an action: what the API answered, or its error. */
export type Outcome = { kind: 'done'; text: string } | { kind: 'error'; error: ApiError } | undefined;

export function OutcomeLine({ outcome }: { outcome: Outcome }) {
  if (!outcome) return null;
  if (outcome.kind === 'error') return <ErrorLine error={outcome.error} />;
  return (
    <p class="ok" role="status">
      {outcome.text}
    </p>
  );
}

export const OPERATE_ROLE_NEEDED = 'Needs the operate or admin role';

export interface ActionProps {
  access: Access;
  label: string;
  /** The confirmation's title and sentence. */
  title: string;
  children: ComponentChildren;
  confirmLabel?: string;
  destructive?: boolean;
  /** False while something the action needs is missing (a name to transfer to). */
  ready?: boolean;
  /**
   * Why the entity cannot take the action at all (a vehicle without power control): the button is
   * disabled with this as its title, as for a role that may not operate.
   */
  unavailable?: string;
  /** Calls the API; what it resolves to is shown under the buttons. */
  run: () => Promise<string>;
  onOutcome: (outcome: Outcome) => void;
}

/**
 * A button that asks in `Confirm`, then runs; disabled, saying why, for a read session (the role
 * needed) and for an entity that cannot take it (`unavailable`).
 */
export function Action(props: ActionProps) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const why = mayOperate(props.access) ? props.unavailable : OPERATE_ROLE_NEEDED;
  return (
    <>
      <button
        type="button"
        class={props.destructive ? 'danger' : undefined}
        disabled={why !== undefined || busy || props.ready === false}
        title={why}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
      {asking ? (
        <Confirm
          title={props.title}
          confirmLabel={props.confirmLabel ?? props.label}
          destructive={props.destructive}
          busy={busy}
          onCancel={() => setAsking(false)}
          onConfirm={async () => {
            setBusy(true);
            props.onOutcome(undefined);
            try {
              props.onOutcome({ kind: 'done', text: await props.run() });
            } catch (caught) {
              props.onOutcome({
                kind: 'error',
                error:
                  caught instanceof ApiError
                    ? caught
                    : new ApiError(0, 'network', String((caught as Error).message)),
              });
            } finally {
              setBusy(false);
              setAsking(false);
            }
          }}
        >
          {props.children}
        </Confirm>
      ) : null}
    </>
  );
}

/** A read-role session sees why the actions are disabled. */
export function RoleNote({ access }: { access: Access }) {
  if (mayOperate(access)) return null;
  return (
    <p class="hint">
      {OPERATE_ROLE_NEEDED}
      {access.kind === 'session'
        ? ` (you are ${access.session.role})`
        : ' (no token is configured: read-only)'}
      .
    </p>
  );
}

/** A labelled reading: name, value, and when it was read. */
export function Reading({
  label,
  children,
  at,
}: {
  label: string;
  children: ComponentChildren;
  at?: string | null;
}) {
  return (
    <>
      <dt>{label}</dt>
      <dd>
        {children}
        {at !== undefined ? (
          <span class="hint">
            {' '}
            · <Time iso={at} />
          </span>
        ) : null}
      </dd>
    </>
  );
}

/** One entity's view, read again after each of its events and on `refresh`; its live events. */
export interface Entity<View> {
  subject: string;
  view: Loaded<View>;
  live: LoggedEvent[];
  stream: StreamState;
  version: number;
  refresh: () => void;
}

export function useEntity<View extends EntityBase>(kind: EntityKind, id: string): Entity<View> {
  const subject = `${kind}/${id}`;
  const [version, setVersion] = useState(0);
  const [live, setLive] = useState<LoggedEvent[]>([]);
  const view = useApi((signal) => api<View>(entityPath(kind, id), { signal }), [kind, id, version]);
  const stream = useSubjectStream(subject, (event) => {
    setLive((previous) => [event, ...previous].slice(0, TIMELINE_MAX));
    setVersion((value) => value + 1);
  });
  useEffect(() => setLive([]), [kind, id]);
  return { subject, view, live, stream, version, refresh: () => setVersion((value) => value + 1) };
}

/**
 * An entity page: the way back to the fleet, the heading, the readings (`readings`, a `<dl>`'s
 * content) beside the actions, then the open incidents and the timeline.
 */
export function EntityFrame<View extends EntityBase>(props: {
  kind: EntityKind;
  id: string;
  entity: Entity<View>;
  readings: (view: View) => ComponentChildren;
  children: ComponentChildren;
}) {
  const { kind, id, entity } = props;
  const view = entity.view.value;
  return (
    <section aria-labelledby="page-title" class="entity">
      <p>
        <a href={kind === 'robot' ? `${href('fleet')}?tab=robots` : href('fleet')}>← Fleet</a>
      </p>
      <h1 id="page-title">
        {kind === 'robot' ? 'Robot' : 'Vehicle'} <span class="mono">{id}</span>
      </h1>
      <ErrorLine error={entity.view.error} />
      {view ? (
        <div class="columns">
          <section aria-labelledby="snapshot-title">
            <h2 id="snapshot-title">As last observed</h2>
            <dl>
              <Reading label="In the list">
                {view.presence.status === 'listed' ? (
                  'listed'
                ) : (
                  <span class="bad">
                    missing from {view.presence.missedLists} list(s) since{' '}
                    <Time iso={view.presence.missingSince} />
                  </span>
                )}
              </Reading>
              {props.readings(view)}
              <Reading label="Last seen" at={view.lastSeenAt}>
                {view.lastSeenAt ? age(view.lastSeenAt) : 'never'}
              </Reading>
              {view.lastError ? (
                <Reading label="Last error">
                  <span class="bad">
                    {view.lastError.signal}: {view.lastError.message} ({view.lastError.code})
                  </span>
                </Reading>
              ) : null}
            </dl>
            <p class="hint">{entity.stream === 'open' ? 'Live.' : 'Live updates reconnecting…'}</p>
          </section>
          {props.children}
        </div>
      ) : null}
      <OpenIncidents subject={entity.subject} version={entity.version} />
      <Timeline subject={entity.subject} live={entity.live} />
    </section>
  );
}
