import { useEffect, useRef, useState } from 'preact/hooks';
import { followEvents, type StreamFilter, type StreamState } from './stream.js';

/**
 * How long a page waits after an event before it loads again: the events meanwhile ride along, so
 * a burst is one load, and a steady stream is a load every so often, never none.
 */
export const LIVE_RELOAD_DELAY_MS = 400;

export type LiveState = StreamState | 'reconnecting';

/**
 * Keeps a page's data in step with the event stream: every matching event asks for a reload
 * (at most one per `LIVE_RELOAD_DELAY_MS`), and so does every reconnection (events may have been missed while it was down).
 * Returns the stream's state, `reconnecting` once a connection that was open dropped.
 */
export function useLiveReload(reload: () => void, filter: StreamFilter = {}): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  const latest = useRef(reload);
  latest.current = reload;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wasOpen = false;
    const soon = () => {
      if (timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        latest.current();
      }, LIVE_RELOAD_DELAY_MS);
    };
    const stop = followEvents(filter, soon, (next) => {
      if (next === 'open') {
        if (wasOpen) soon();
        wasOpen = true;
        setState('open');
      } else setState(next === 'connecting' && wasOpen ? 'reconnecting' : next);
    });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, [filter.type, filter.subject]);
  return state;
}
