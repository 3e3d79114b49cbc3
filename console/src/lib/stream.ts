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
}

export type StreamState = 'connecting' | 'open' | 'closed';

export interface StreamFilter {
  type?: string;
  subject?: string;
}

export function followEvents(
  filter: StreamFilter,
  onEvent: (event: StreamedEvent) => void,
  onState: (state: StreamState) => void = () => {},
): () => void {
  const url = new URL('/api/events/stream', window.location.origin);
  if (filter.type) url.searchParams.set('type', filter.type);
  if (filter.subject) url.searchParams.set('subject', filter.subject);
  const source = new EventSource(url, { withCredentials: true });
  onState('connecting');
  source.onopen = () => onState('open');
  source.onerror = () => onState(source.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
  source.onmessage = (message) => {
    try {
      const event = JSON.parse(message.data) as Omit<StreamedEvent, 'streamId'>;
      onEvent({ ...event, streamId: message.lastEventId });
    } catch {
      // A line that is not an event (a comment, a heartbeat) says nothing.
    }
  };
  return () => source.close();
}
