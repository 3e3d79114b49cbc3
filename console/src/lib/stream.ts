/**
 * The live event stream (`/api/events/stream`, server-sent events on the session cookie). The
 * browser's EventSource reconnects by itself after a network drop and sends `Last-Event-ID`, so
 * the server replays what was missed; the page only hears events and the connection's state.
 */

export interface StreamedEvent {
  streamId: string;
  id: string;
  type: string;
  subject: string;
  time: string;
  data: Record<string, unknown>;
  /** The sentence fleetwatch says the event in (the stream's `envelope` format). */
  summary?: string;
}

export type StreamState = 'connecting' | 'open' | 'closed';

export interface StreamFilter {
  type?: string;
  subject?: string;
  /** Resume after this stream id (the events logged since are replayed first). */
  from?: string;
}

/** The server's `event: gap`: the capped log may have dropped events after `lastEventId`. */
export interface StreamGap {
  lastEventId: string;
  firstAvailable: string;
}

export function followEvents(
  filter: StreamFilter,
  onEvent: (event: StreamedEvent) => void,
  onState: (state: StreamState) => void = () => {},
  onGap: (gap: StreamGap) => void = () => {},
): () => void {
  const url = new URL('/api/events/stream', window.location.origin);
  // Each event with its sentence: the page shows events to people, as the CLI words them.
  url.searchParams.set('format', 'envelope');
  if (filter.type) url.searchParams.set('type', filter.type);
  if (filter.subject) url.searchParams.set('subject', filter.subject);
  if (filter.from) url.searchParams.set('lastEventId', filter.from);
  const source = new EventSource(url, { withCredentials: true });
  onState('connecting');
  source.onopen = () => onState('open');
  source.onerror = () => onState(source.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
  source.onmessage = (message) => {
    try {
      const { event, summary } = JSON.parse(message.data) as {
        event: Omit<StreamedEvent, 'streamId' | 'summary'>;
        summary?: unknown;
      };
      onEvent({
        ...event,
        streamId: message.lastEventId,
        ...(typeof summary === 'string' ? { summary } : {}),
      });
    } catch {
      // A line that is not an event (a comment, a heartbeat) says nothing.
    }
  };
  source.addEventListener('gap', (message) => {
    try {
      onGap(JSON.parse((message as MessageEvent<string>).data) as StreamGap);
    } catch {
      onGap({ lastEventId: '', firstAvailable: '' });
    }
  });
  return () => source.close();
}
