import { useEffect, useRef, useState } from 'preact/hooks';
import { followEvents, type StreamFilter, type StreamState } from './stream.js';

/** How long a page waits after an event for more before it loads again (a burst is one load). */
export const LIVE_RELOAD_DEBOUNCE_MS = 400;

export type LiveState = StreamState | 'reconnecting';

/**
 * Keeps a page's data in step with the event stream: every matching event asks for a reload
 * (debounced), and so does every reconnection (events may have been missed while it was down).
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
      clearTimeout(timer);
      timer = setTimeout(() => latest.current(), LIVE_RELOAD_DEBOUNCE_MS);
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
