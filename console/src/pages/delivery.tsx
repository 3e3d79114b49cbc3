import './delivery.css';
import { useEffect, useState } from 'preact/hooks';
import { Confirm } from '../components/confirm.js';
import { ErrorLine } from '../components/error-line.js';
import { Time } from '../components/time-cell.js';
import { type ApiError, api } from '../lib/api.js';
import { useQueryFilters } from '../lib/router.js';
import { mayOperate } from '../lib/session.js';
import { useApi } from '../lib/use-api.js';
import type { PageProps } from './index.js';

/**
 * Delivery: the receivers (`/api/receivers`: disabled, held, dead letters) with resume and enable,
 * and the dead letters (`/api/dead-letters`) with replay (exactly once) and purge. Both are read
 * again every few seconds, since holds end and letters arrive by themselves.
 */

interface ReceiverView {
  name: string;
  kind: string;
  disabled: { reason: string; at: string; status?: number } | null;
  hold: {
    since: string;
    until: string;
    cause: 'throttled' | 'retry' | 'error';
    status?: number;
    reason: string;
    retryAfterMs?: number;
    capped: boolean;
    notification?: string;
  } | null;
  maxHoldMs: number;
  deadLetters: number;
}

interface DeadLetterView {
  id: string;
  receiver: string;
  notificationId: string;
  severity: string;
  type: string | null;
  subject: string | null;
  events: number;
  reason: string;
  attempts: number;
  failedAt: string | null;
  queuedAt: string;
}

type Action =
  | { kind: 'resume'; receiver: ReceiverView }
  | { kind: 'enable'; receiver: ReceiverView }
  | { kind: 'replay'; letter: DeadLetterView }
  | { kind: 'purge'; letter: DeadLetterView };

/** How often the page reads the receivers and letters again. */
const REFRESH_MS = 5_000;

const CAUSES: Record<string, string> = {
  throttled: 'it asked to wait',
  retry: 'waiting to retry',
  error: "fleetwatch's own trouble",
};

export function DeliveryPage({ route, access }: PageProps) {
  const [{ receiver }, setFilters] = useQueryFilters(route.query, (query) => ({
    receiver: query.get('receiver') ?? '',
  }));
  const setReceiver = (name: string) => setFilters({ receiver: name });
  const receivers = useApi((signal) => api<{ items: ReceiverView[] }>('/api/receivers', { signal }), []);
  const letters = useApi(
    (signal) =>
      api<{ items: DeadLetterView[] }>('/api/dead-letters', {
        query: { receiver: receiver || undefined },
        signal,
      }),
    [receiver],
  );
  const [action, setAction] = useState<Action | undefined>();
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ text: string; error?: boolean } | undefined>();
  const operate = mayOperate(access);

  const reloadAll = () => {
    receivers.reload();
    letters.reload();
  };
  useEffect(() => {
    const timer = setInterval(reloadAll, REFRESH_MS);
    return () => clearInterval(timer);
  }, [receivers.reload, letters.reload]);

  const run = async (current: Action) => {
    setBusy(true);
    try {
      setNotice({ text: await perform(current) });
    } catch (caught) {
      const error = caught as ApiError;
      setNotice({ text: failureText(current, error), error: true });
    } finally {
      setBusy(false);
      setAction(undefined);
      reloadAll();
    }
  };

  return (
    <section aria-labelledby="page-title" class="delivery">
      <h1 id="page-title">Delivery</h1>
      <div class="toolbar">
        <button type="button" onClick={reloadAll}>
          Refresh
        </button>
        {notice ? (
          <p class={notice.error ? 'error' : 'notice'} role="status">
            {notice.text}
          </p>
        ) : null}
      </div>

      <h2 id="receivers-title">Receivers</h2>
      <ErrorLine error={receivers.error} />
      {receivers.value ? (
        <div class="table-scroll">
          <table aria-labelledby="receivers-title">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">State</th>
                <th scope="col">Dead letters</th>
                {operate ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {receivers.value.items.map((item) => (
                <tr key={item.name}>
                  <td>{item.name}</td>
                  <td>{item.kind}</td>
                  <td>
                    <ReceiverStateCell receiver={item} />
                  </td>
                  <td>
                    {item.deadLetters > 0 ? (
                      <button
                        type="button"
                        class="link"
                        aria-label={`Show the ${item.deadLetters} dead letters of ${item.name}`}
                        onClick={() => setReceiver(item.name)}
                      >
                        {item.deadLetters}
                      </button>
                    ) : (
                      '0'
                    )}
                  </td>
                  {operate ? (
                    <td>
                      <div class="row-actions">
                        {item.hold ? (
                          <button
                            type="button"
                            aria-label={`Resume ${item.name}`}
                            onClick={() => setAction({ kind: 'resume', receiver: item })}
                          >
                            Resume
                          </button>
                        ) : null}
                        {item.disabled ? (
                          <button
                            type="button"
                            aria-label={`Enable ${item.name}`}
                            onClick={() => setAction({ kind: 'enable', receiver: item })}
                          >
                            Enable
                          </button>
                        ) : null}
                      </div>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : receivers.loading ? (
        <p class="hint">Loading…</p>
      ) : null}

      <h2 id="letters-title">Dead letters</h2>
      <p class="hint">
        Notifications that could not be delivered. A replay sends one again, once, at the end of its
        receiver's queue; a purge deletes it.
      </p>
      <div class="toolbar">
        <label class="inline">
          Receiver
          <select
            value={receiver}
            onChange={(event) => setReceiver((event.target as HTMLSelectElement).value)}
          >
            <option value="">all</option>
            {(receivers.value?.items ?? []).map((item) => (
              <option key={item.name} value={item.name}>
                {item.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorLine error={letters.error} />
      {letters.value && letters.value.items.length === 0 ? <p class="hint">No dead letters.</p> : null}
      {letters.value && letters.value.items.length > 0 ? (
        <div class="table-scroll">
          <table aria-labelledby="letters-title">
            <thead>
              <tr>
                <th scope="col">Receiver</th>
                <th scope="col">Failed</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last error</th>
                <th scope="col">Notification</th>
                {operate ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {letters.value.items.map((letter) => (
                <tr key={`${letter.receiver}/${letter.id}`} data-notification={letter.notificationId}>
                  <td>{letter.receiver}</td>
                  <td>
                    <Time iso={letter.failedAt} />
                  </td>
                  <td>{letter.attempts}</td>
                  <td class="reason">{letter.reason}</td>
                  <td>
                    <span class={`severity-${letter.severity}`}>{letter.severity}</span>{' '}
                    <code>{letter.type ?? '—'}</code> {letter.subject ?? ''}
                    {letter.events > 1 ? (
                      <span class="hint"> and {letter.events - 1} more events</span>
                    ) : null}
                  </td>
                  {operate ? (
                    <td>
                      <div class="row-actions">
                        <button
                          type="button"
                          aria-label={`Replay the dead letter of ${letter.subject ?? letter.notificationId} to ${letter.receiver}`}
                          onClick={() => setAction({ kind: 'replay', letter })}
                        >
                          Replay
                        </button>
                        <button
                          type="button"
                          class="danger-outline"
                          aria-label={`Purge the dead letter of ${letter.subject ?? letter.notificationId} to ${letter.receiver}`}
                          onClick={() => setAction({ kind: 'purge', letter })}
                        >
                          Purge
                        </button>
                      </div>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}

      {action ? (
        <Confirm
          {...confirmText(action)}
          busy={busy}
          onCancel={() => setAction(undefined)}
          onConfirm={() => run(action)}
        />
      ) : null}
    </section>
  );
}

function ReceiverStateCell({ receiver }: { receiver: ReceiverView }) {
  if (receiver.disabled)
    return (
      <span class="receiver-state disabled">
        disabled since <Time iso={receiver.disabled.at} />: {receiver.disabled.reason}
      </span>
    );
  if (receiver.hold)
    return (
      <span class="receiver-state held">
        held until <Time iso={receiver.hold.until} /> ({CAUSES[receiver.hold.cause] ?? receiver.hold.cause}
        {receiver.hold.capped ? ', cut to max_hold' : ''}): {receiver.hold.reason}
      </span>
    );
  return <span class="receiver-state ok">enabled</span>;
}

function letterPath(letter: DeadLetterView): string {
  return `/api/dead-letters/${encodeURIComponent(letter.id)}`;
}

async function perform(action: Action): Promise<string> {
  switch (action.kind) {
    case 'resume': {
      const answer = await api<{ resumed: unknown }>(
        `/api/receivers/${encodeURIComponent(action.receiver.name)}/resume`,
        { method: 'POST' },
      );
      return answer.resumed
        ? `${action.receiver.name} resumed.`
        : `${action.receiver.name} was not held any more.`;
    }
    case 'enable': {
      const answer = await api<{ enabled: unknown }>(
        `/api/receivers/${encodeURIComponent(action.receiver.name)}/enable`,
        { method: 'POST' },
      );
      return answer.enabled
        ? `${action.receiver.name} enabled again; its dead letters stay until replayed.`
        : `${action.receiver.name} was not disabled any more.`;
    }
    case 'replay':
      await api(`${letterPath(action.letter)}/replay`, {
        method: 'POST',
        query: { receiver: action.letter.receiver },
      });
      return `Replayed to ${action.letter.receiver}: it is at the end of the queue.`;
    case 'purge':
      await api(letterPath(action.letter), { method: 'DELETE', query: { receiver: action.letter.receiver } });
      return 'Dead letter purged.';
  }
}

/** The API's refusal, in the page's words where it has some (a replay is done exactly once). */
function failureText(action: Action, error: ApiError): string {
  if (action.kind === 'replay' && error.code === 'not_dead') return `Already replayed: ${error.message}`;
  if (error.status === 404 && (action.kind === 'replay' || action.kind === 'purge'))
    return `Gone already: ${error.message}`;
  return error.message;
}

function confirmText(action: Action): {
  title: string;
  confirmLabel: string;
  destructive?: boolean;
  children: preact.ComponentChildren;
} {
  switch (action.kind) {
    case 'resume':
      return {
        title: `Resume ${action.receiver.name}?`,
        confirmLabel: 'Resume',
        children: (
          <p>
            The hold ends now on every replica and the waiting notification is sent at once, although the
            receiver asked to wait until <Time iso={action.receiver.hold?.until} />.
          </p>
        ),
      };
    case 'enable':
      return {
        title: `Enable ${action.receiver.name}?`,
        confirmLabel: 'Enable',
        children: (
          <p>
            It was disabled because it said it is gone ({action.receiver.disabled?.reason}). Notifications are
            sent to it again; enable it once it is fixed. Its dead letters stay: replay them.
          </p>
        ),
      };
    case 'replay':
      return {
        title: 'Replay this dead letter?',
        confirmLabel: 'Replay',
        children: (
          <p>
            The notification ({action.letter.type ?? 'notification'} {action.letter.subject ?? ''}) goes back
            to the end of {action.letter.receiver}'s queue, attempts reset. It can be replayed once.
          </p>
        ),
      };
    case 'purge':
      return {
        title: 'Purge this dead letter?',
        confirmLabel: 'Purge',
        destructive: true,
        children: (
          <p>
            The notification ({action.letter.type ?? 'notification'} {action.letter.subject ?? ''}) to{' '}
            {action.letter.receiver} is deleted for good; it cannot be replayed after this.
          </p>
        ),
      };
  }
}
