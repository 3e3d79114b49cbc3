import './events.css';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ErrorLine } from '../components/error-line.js';
import { StreamStatus } from '../components/stream-status.js';
import { Time } from '../components/time-cell.js';
import { type ApiError, api } from '../lib/api.js';
import {
  eventSeverity,
  isGlob,
  MAX_TAIL_EVENTS,
  prepend,
  sayEvent,
  type TailFilter,
  tailMatcher,
} from '../lib/event-tail.js';
import { entityOf, SEVERITIES } from '../lib/incidents.js';
import { href, useQueryFilters } from '../lib/router.js';
import { followEvents, type StreamedEvent, type StreamGap } from '../lib/stream.js';
import type { LiveState } from '../lib/use-live-reload.js';
import type { PageProps } from './index.js';

/**
 * The event log, live: the newest events first, the last `MAX_TAIL_EVENTS` kept in memory. It starts
 * with the newest logged ones (`GET /api/events`) and follows the stream from there, so nothing falls
 * between; the browser's EventSource resumes after a drop with `Last-Event-ID`, and the server's
 * `event: gap` (the capped log lost some) is shown. The type glob and an exact subject go to the
 * server; a subject glob and the minimum severity are applied here, to what arrives.
 */

/** Events shown when the page opens, before the live ones. */
const INITIAL_EVENTS = 100;

interface EventPage {
  items: Array<{ streamId: string; event: Omit<StreamedEvent, 'streamId' | 'summary'>; summary?: string }>;
  lastStreamId: string | null;
}

function input(event: Event): string {
  return (event.target as HTMLInputElement).value;
}

/** How many events arrived after the paused list's newest one. */
function heldSince(events: readonly StreamedEvent[], paused: readonly StreamedEvent[]): number {
  const first = paused[0];
  if (!first) return events.length;
  const at = events.findIndex((event) => event.id === first.id);
  return at < 0 ? events.length : at;
}

export function EventsPage({ route }: PageProps) {
  const [filter, setFilter] = useQueryFilters<TailFilter>(route.query, (query) => ({
    type: query.get('type') ?? '',
    subject: query.get('subject') ?? '',
    severity: query.get('severity') ?? '',
  }));
  // What the server is asked for changes only once the viewer stops typing a filter.
  const [serverFilter, setServerFilter] = useState({
    type: filter.type.trim(),
    subject: filter.subject.trim(),
  });
  const [events, setEvents] = useState<StreamedEvent[]>([]);
  const [paused, setPaused] = useState<StreamedEvent[] | undefined>();
  const [state, setState] = useState<LiveState>('connecting');
  const [gap, setGap] = useState<StreamGap | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const newest = useRef<string | undefined>();

  useEffect(() => {
    const timer = setTimeout(
      () => setServerFilter({ type: filter.type.trim(), subject: filter.subject.trim() }),
      400,
    );
    return () => clearTimeout(timer);
  }, [filter.type, filter.subject]);

  useEffect(() => {
    let stop: (() => void) | undefined;
    let cancelled = false;
    let wasOpen = false;
    const query = {
      type: serverFilter.type || undefined,
      // A subject glob is filtered here: the API takes one subject exactly.
      subject: serverFilter.subject && !isGlob(serverFilter.subject) ? serverFilter.subject : undefined,
    };
    const arrive = (arrived: StreamedEvent[]) => {
      const last = arrived.at(-1);
      if (last) newest.current = last.streamId;
      setEvents((list) => prepend(list, arrived));
    };
    const start = async () => {
      setError(undefined);
      let from = newest.current;
      if (from === undefined) {
        try {
          const page = await api<EventPage>('/api/events', { query: { ...query, limit: INITIAL_EVENTS } });
          if (cancelled) return;
          arrive(
            page.items.map(({ streamId, event, summary }) => ({
              ...event,
              streamId,
              ...(summary === undefined ? {} : { summary }),
            })),
          );
          from = page.lastStreamId ?? undefined;
        } catch (caught) {
          if (!cancelled) setError(caught as ApiError);
          return;
        }
      }
      stop = followEvents(
        { ...query, ...(from ? { from } : {}) },
        (event) => arrive([event]),
        (next) => {
          if (next === 'open') wasOpen = true;
          setState(next === 'connecting' && wasOpen ? 'reconnecting' : next);
        },
        setGap,
      );
    };
    start();
    return () => {
      cancelled = true;
      stop?.();
    };
  }, [serverFilter.type, serverFilter.subject]);

  const matches = useMemo(() => tailMatcher(filter), [filter.type, filter.subject, filter.severity]);
  const shown = (paused ?? events).filter(matches);
  const waiting = paused ? heldSince(events, paused) : 0;

  return (
    <section aria-labelledby="page-title" class="events">
      <h1 id="page-title">Live events</h1>
      <StreamStatus state={state} />
      {gap ? (
        <p class="warning-line" role="alert">
          Some events may be missing: the event log is capped and dropped events after{' '}
          <code>{gap.lastEventId || 'the last one seen'}</code> (it now starts at{' '}
          <code>{gap.firstAvailable || '?'}</code>).{' '}
          <button type="button" class="link" onClick={() => setGap(undefined)}>
            Dismiss
          </button>
        </p>
      ) : null}
      <form class="toolbar" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Type{' '}
          <input
            value={filter.type}
            placeholder="vehicle.vpn.*"
            onInput={(event) => setFilter({ type: input(event) })}
          />
        </label>
        <label>
          Subject{' '}
          <input
            value={filter.subject}
            placeholder="robot/* or vehicle/veh-0001"
            onInput={(event) => setFilter({ subject: input(event) })}
          />
        </label>
        <label>
          Minimum severity{' '}
          <select
            value={filter.severity}
            onChange={(event) => setFilter({ severity: (event.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            {SEVERITIES.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          aria-pressed={paused !== undefined}
          onClick={() => setPaused(paused ? undefined : events)}
        >
          {paused ? 'Resume' : 'Pause'}
        </button>
      </form>
      <ErrorLine error={error} />
      <p class="hint" aria-live="polite">
        {shown.length} event{shown.length === 1 ? '' : 's'} shown, newest first; the page keeps the last{' '}
        {MAX_TAIL_EVENTS.toLocaleString('en')}.
        {paused ? ` Paused: ${waiting} new event${waiting === 1 ? '' : 's'} held.` : ''}
      </p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Type</th>
              <th scope="col">Subject</th>
              <th scope="col" class="wide-only">
                What
              </th>
              <th scope="col">Severity</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((event) => {
              const entity = entityOf(event.subject);
              const severity = eventSeverity(event);
              return (
                <tr key={event.id} data-stream-id={event.streamId}>
                  <td>
                    <Time iso={event.time} />
                  </td>
                  <td class="mono">{event.type}</td>
                  <td>
                    {entity ? <a href={href(entity.page, entity.id)}>{event.subject}</a> : event.subject}
                  </td>
                  <td class="wide-only summary">{sayEvent(event)}</td>
                  <td class={`severity-${severity}`}>{severity}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
