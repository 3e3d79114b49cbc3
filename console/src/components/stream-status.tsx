import './stream-status.css';
import type { LiveState } from '../lib/use-live-reload.js';

const WORDS: Record<LiveState, string> = {
  connecting: 'Connecting to the event stream…',
  open: 'Live',
  reconnecting: 'Reconnecting to the event stream — what is shown may be out of date',
  closed: 'The event stream is closed — reload the page to follow it again',
};

/** The event stream's connection, in words, announced politely to screen readers. */
export function StreamStatus({ state }: { state: LiveState }) {
  return (
    <p class={`stream-status stream-${state}`} role="status">
      <span class="stream-dot" aria-hidden="true" /> {WORDS[state]}
    </p>
  );
}
