import './incidents.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorLine } from '../components/error-line.js';
import { StreamStatus } from '../components/stream-status.js';
import { Time } from '../components/time-cell.js';
import { api } from '../lib/api.js';
import {
  describeState,
  entityOf,
  GROUP_LABELS,
  type GroupLabel,
  groupIncidents,
  INCIDENT_STATE_FILTERS,
  type Incident,
  type IncidentPage,
  matchesText,
  SEVERITIES,
} from '../lib/incidents.js';
import { href, useQueryFilters } from '../lib/router.js';
import type { StreamedEvent } from '../lib/stream.js';
import { age } from '../lib/time.js';
import { useApi } from '../lib/use-api.js';
import { useLiveReload } from '../lib/use-live-reload.js';
import { IncidentActions } from './incident-actions.js';
import type { PageProps } from './index.js';

/**
 * The landing page: what is firing now, grouped by a label as the notifications group it (by type
 * unless the viewer picks another), kept in step with the event stream. `#/incidents/<id>` is one
 * incident with its events and acknowledgements.
 */

/** The list asks for this many (the API's most); more are said to be there, not shown. */
const LIST_LIMIT = 1_000;
/** Ages and mutes (a silence ending) change without an event: refreshed this often. */
const REFRESH_MS = 30_000;

function useTick(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

export function IncidentsPage(props: PageProps) {
  const id = props.route.params[0];
  return id ? <IncidentDetail {...props} id={id} /> : <IncidentList {...props} />;
}

function EntityLink({ subject }: { subject: string }) {
  const entity = entityOf(subject);
  return entity ? <a href={href(entity.page, entity.id)}>{subject}</a> : <span>{subject}</span>;
}

function Since({ iso, now }: { iso: string; now: number }) {
  return (
    <span class="since">
      <Time iso={iso} /> <span class="hint">({age(iso, now)})</span>
    </span>
  );
}

function StateCell({ incident }: { incident: Incident }) {
  const ack = incident.acknowledgement;
  return (
    <ul class="states">
      {describeState(incident).map((line) => (
        <li key={line} class={line === 'active' ? 'state-active' : undefined}>
          {line}
          {line.startsWith('acknowledged') && ack ? (
            <>
              {' '}
              until <Time iso={ack.until} />
              {ack.comment ? <span class="hint"> — {ack.comment}</span> : null}
            </>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function IncidentList({ access, route }: PageProps) {
  const [{ state, severity, text }, setFilters] = useQueryFilters(route.query, (query) => ({
    state: query.get('state') ?? 'open',
    severity: query.get('severity') ?? '',
    text: query.get('q') ?? '',
  }));
  const [groupBy, setGroupBy] = useState<GroupLabel>('type');
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const now = useTick(REFRESH_MS);
  const list = useApi<IncidentPage>(
    (signal) =>
      api<IncidentPage>('/api/incidents', {
        query: { state, severity, limit: LIST_LIMIT },
        signal,
      }),
    [state, severity],
  );
  const live = useLiveReload(list.reload);
  const mounted = useRef(now);
  useEffect(() => {
    if (now !== mounted.current) list.reload();
  }, [now]);

  const items = (list.value?.items ?? []).filter((incident) => matchesText(incident, text));
  const groups = groupIncidents(items, groupBy);
  const toggle = (key: string) => {
    const next = new Set(collapsed);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    setCollapsed(next);
  };

  return (
    <section aria-labelledby="page-title" class="incidents">
      <h1 id="page-title">Incidents</h1>
      <StreamStatus state={live} />
      <form class="toolbar" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          State{' '}
          <select
            value={state}
            onChange={(event) => setFilters({ state: (event.target as HTMLSelectElement).value })}
          >
            {INCIDENT_STATE_FILTERS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity{' '}
          <select
            value={severity}
            onChange={(event) => setFilters({ severity: (event.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            {SEVERITIES.map((name) => (
              <option key={name} value={name}>
                {name} or worse
              </option>
            ))}
          </select>
        </label>
        <label>
          Type or subject{' '}
          <input
            type="search"
            value={text}
            placeholder="vpn, veh-0001 …"
            onInput={(event) => setFilters({ text: (event.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          Group by{' '}
          <select
            value={groupBy}
            onChange={(event) => setGroupBy((event.target as HTMLSelectElement).value as GroupLabel)}
          >
            {GROUP_LABELS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorLine error={list.error} />
      {list.value ? (
        <p class="hint" aria-live="polite">
          {items.length === 0
            ? state === 'open'
              ? 'Nothing is firing.'
              : 'No incident matches.'
            : `${items.length} incident${items.length === 1 ? '' : 's'} in ${groups.length} group${groups.length === 1 ? '' : 's'}`}
          {list.value.total > list.value.items.length
            ? ` (the first ${list.value.items.length} of ${list.value.total}; narrow the filters)`
            : ''}
        </p>
      ) : list.loading ? (
        <p class="hint">Loading…</p>
      ) : null}
      {groups.map((group) => {
        const open = !collapsed.has(group.key);
        const bodyId = `group-${groupBy}-${group.key}`;
        return (
          <section key={group.key} class="incident-group" aria-label={`${groupBy} ${group.key}`}>
            <h2>
              <button
                type="button"
                class="group-toggle"
                aria-expanded={open}
                aria-controls={bodyId}
                onClick={() => toggle(group.key)}
              >
                <span aria-hidden="true">{open ? '▾' : '▸'}</span>{' '}
                <span class={`severity-${group.severity}`}>{group.key || '(none)'}</span>{' '}
                <span class="count">{group.items.length}</span>
                {group.active < group.items.length ? (
                  <span class="hint"> ({group.active} active)</span>
                ) : null}
              </button>
            </h2>
            {open ? (
              <div class="table-wrap" id={bodyId}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Severity</th>
                      {groupBy === 'type' ? null : <th scope="col">Type</th>}
                      <th scope="col">Entity</th>
                      <th scope="col">Since</th>
                      <th scope="col">State</th>
                      <th scope="col">
                        <span class="wide-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {group.items.map((incident) => (
                      <tr key={incident.id} data-incident={incident.id}>
                        <td class={`severity-${incident.severity}`}>{incident.severity}</td>
                        {groupBy === 'type' ? null : <td class="mono">{incident.type}</td>}
                        <td>
                          <EntityLink subject={incident.subject} />
                        </td>
                        <td>
                          <a
                            href={href('incidents', incident.id)}
                            aria-label={`Details of ${incident.type} on ${incident.subject}`}
                          >
                            <Since iso={incident.since} now={now} />
                          </a>
                        </td>
                        <td class="state-cell">
                          <StateCell incident={incident} />
                        </td>
                        <td class="actions-cell">
                          <IncidentActions incident={incident} access={access} onChanged={list.reload} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : null}
          </section>
        );
      })}
    </section>
  );
}

interface EventPage {
  items: Array<{
    streamId: string;
    event: Omit<StreamedEvent, 'streamId'>;
    muted?: { reason: string; by: string };
  }>;
  lastStreamId: string | null;
}

/** The entity's events shown with an incident (the newest). */
const DETAIL_EVENTS = 50;

function IncidentDetail({ access, id }: PageProps & { id: string }) {
  const now = useTick(REFRESH_MS);
  const incident = useApi<Incident>(
    (signal) => api<Incident>(`/api/incidents/${encodeURIComponent(id)}`, { signal }),
    [id],
  );
  const subject = incident.value?.subject;
  const events = useApi<EventPage | undefined>(
    (signal) =>
      subject
        ? api<EventPage>('/api/events', { query: { subject, limit: DETAIL_EVENTS }, signal })
        : Promise.resolve(undefined),
    [subject],
  );
  const acks = useApi<EventPage>(
    (signal) =>
      api<EventPage>('/api/events', {
        query: { subject: `incident/${id}`, type: 'incident.acknowledged', limit: 100 },
        signal,
      }),
    [id],
  );
  const reloadAll = () => {
    incident.reload();
    events.reload();
    acks.reload();
  };
  const live = useLiveReload(reloadAll);

  const view = incident.value;
  return (
    <section aria-labelledby="page-title" class="incidents incident-detail">
      <p>
        <a href={href('incidents')}>← Incidents</a>
      </p>
      <h1 id="page-title">{view ? `${view.type} on ${view.subject}` : `Incident ${id}`}</h1>
      <StreamStatus state={live} />
      <ErrorLine error={incident.error} />
      {view ? (
        <>
          <dl class="facts">
            <dt>Severity</dt>
            <dd class={`severity-${view.severity}`}>{view.severity}</dd>
            <dt>Entity</dt>
            <dd>
              <EntityLink subject={view.subject} />
            </dd>
            <dt>Since</dt>
            <dd>
              <Since iso={view.since} now={now} />
            </dd>
            <dt>Last change</dt>
            <dd>
              <Time iso={view.changedAt} />
            </dd>
            {view.closedAt ? (
              <>
                <dt>Closed</dt>
                <dd>
                  <Time iso={view.closedAt} />
                </dd>
              </>
            ) : null}
            <dt>State</dt>
            <dd>
              <StateCell incident={view} />
            </dd>
            <dt>Id</dt>
            <dd class="mono">{view.id}</dd>
          </dl>
          <IncidentActions incident={view} access={access} onChanged={reloadAll} />
        </>
      ) : null}

      <h2>Acknowledgements</h2>
      <ErrorLine error={acks.error} />
      {acks.value && acks.value.items.length > 0 ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">At</th>
                <th scope="col">By</th>
                <th scope="col">Until</th>
                <th scope="col">Comment</th>
              </tr>
            </thead>
            <tbody>
              {[...acks.value.items].reverse().map(({ streamId, event }) => (
                <tr key={streamId}>
                  <td>
                    <Time iso={event.time} />
                  </td>
                  <td>{String(event.data['by'] ?? '')}</td>
                  <td>
                    <Time iso={String(event.data['until'] ?? '')} />
                  </td>
                  <td>{String(event.data['comment'] ?? '')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="hint">Not acknowledged.</p>
      )}

      <h2>Events of {subject ?? 'the entity'}</h2>
      <ErrorLine error={events.error} />
      {events.value ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">Severity</th>
                <th scope="col">Muted</th>
              </tr>
            </thead>
            <tbody>
              {[...events.value.items].reverse().map(({ streamId, event, muted }) => (
                <tr key={streamId}>
                  <td>
                    <Time iso={event.time} />
                  </td>
                  <td class="mono">{event.type}</td>
                  <td class={`severity-${String(event.data['severity'])}`}>
                    {String(event.data['severity'] ?? '')}
                  </td>
                  <td>{muted ? `${muted.reason} (${muted.by})` : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="hint">The newest {DETAIL_EVENTS} at most; the Live events page follows the rest.</p>
        </div>
      ) : null}
    </section>
  );
}
