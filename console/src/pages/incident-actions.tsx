import { useState } from 'preact/hooks';
import { Confirm } from '../components/confirm.js';
import { ErrorLine } from '../components/error-line.js';
import { type ApiError, api } from '../lib/api.js';
import type { Incident } from '../lib/incidents.js';
import { type Access, mayOperate } from '../lib/session.js';

/**
 * What an operator may do about an incident: acknowledge it (`POST /api/incidents/{id}/ack`),
 * silence what it matches (`POST /api/silences`, prefilled with its type and subject), and expire
 * the silence that mutes it (`DELETE /api/silences/{id}`). Each change is confirmed in a dialog; a
 * role that may not change things sees the buttons disabled, saying why.
 */

type Dialog = 'ack' | 'silence' | 'expire' | undefined;

/**
 * The daemon reads silences through a cache of about 2 s (README "Silences"): after creating or
 * expiring one, the page loads again once that has passed, so the state shown is the new one.
 */
const SILENCE_SETTLE_MS = 2_500;

function actorOf(access: Access): string {
  return access.kind === 'session' ? access.session.actor : 'console';
}

function value(event: Event): string {
  return (event.target as HTMLInputElement).value;
}

export function IncidentActions({
  incident,
  access,
  onChanged,
}: {
  incident: Incident;
  access: Access;
  onChanged: () => void;
}) {
  const [dialog, setDialog] = useState<Dialog>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const [comment, setComment] = useState('');
  const [duration, setDuration] = useState('4h');
  const [type, setType] = useState(incident.type);
  const [subject, setSubject] = useState(incident.subject);

  const allowed = mayOperate(access);
  const why = allowed
    ? undefined
    : access.kind === 'session'
      ? `Your role (${access.session.role}) may not change things; it takes operate or admin`
      : 'No token is configured: the console is read-only';
  const open = (which: Dialog, defaultDuration: string) => {
    setError(undefined);
    setComment('');
    setDuration(defaultDuration);
    setType(incident.type);
    setSubject(incident.subject);
    setDialog(which);
  };
  const run = async (change: () => Promise<unknown>, settle = false) => {
    setBusy(true);
    setError(undefined);
    try {
      await change();
      setDialog(undefined);
      onChanged();
      if (settle) setTimeout(onChanged, SILENCE_SETTLE_MS);
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  };
  const silenceId = incident.muted?.reason === 'silenced' ? incident.muted.by : undefined;
  const what = `${incident.type} on ${incident.subject}`;

  if (incident.state !== 'open') return null;
  return (
    <span class="incident-actions">
      <button
        type="button"
        disabled={!allowed}
        title={why}
        aria-label={`Acknowledge ${what}`}
        onClick={() => open('ack', '4h')}
      >
        Acknowledge
      </button>
      <button
        type="button"
        disabled={!allowed}
        title={why}
        aria-label={`Silence ${what}`}
        onClick={() => open('silence', '2h')}
      >
        Silence
      </button>
      {silenceId ? (
        <button
          type="button"
          disabled={!allowed}
          title={why}
          aria-label={`Expire silence ${silenceId}`}
          onClick={() => open('expire', '')}
        >
          Expire silence
        </button>
      ) : null}

      {dialog === 'ack' ? (
        <Confirm
          title="Acknowledge the incident"
          confirmLabel="Acknowledge"
          busy={busy}
          onCancel={() => setDialog(undefined)}
          onConfirm={() =>
            run(() =>
              api(`/api/incidents/${encodeURIComponent(incident.id)}/ack`, {
                method: 'POST',
                body: { comment: comment.trim(), author: actorOf(access), for: duration.trim() },
              }),
            )
          }
        >
          <p>
            {what}: its reminders stop until it resolves or the acknowledgement ends. Acknowledged by{' '}
            <strong>{actorOf(access)}</strong>.
          </p>
          <div class="form-grid">
            <label for="ack-comment">Comment</label>
            <input
              id="ack-comment"
              required
              placeholder="on it, ticket …"
              value={comment}
              onInput={(event) => setComment(value(event))}
            />
            <label for="ack-for">For</label>
            <input
              id="ack-for"
              required
              value={duration}
              aria-describedby="ack-for-hint"
              onInput={(event) => setDuration(value(event))}
            />
            <span id="ack-for-hint" class="hint">
              such as 30m, 4h, 2d (1s to 7d)
            </span>
          </div>
          <ErrorLine error={error} />
        </Confirm>
      ) : null}

      {dialog === 'silence' ? (
        <Confirm
          title="Silence what this incident matches"
          confirmLabel="Create silence"
          busy={busy}
          onCancel={() => setDialog(undefined)}
          onConfirm={() =>
            run(
              () =>
                api('/api/silences', {
                  method: 'POST',
                  body: {
                    matchers: {
                      ...(type.trim() === '' ? {} : { type: type.trim() }),
                      ...(subject.trim() === '' ? {} : { subject: subject.trim() }),
                    },
                    duration: duration.trim(),
                    createdBy: actorOf(access),
                    comment: comment.trim(),
                  },
                }),
              true,
            )
          }
        >
          <p>
            Matching events stay in the event log but notify no one until the silence ends. Globs (
            <code>*</code>, <code>?</code>) widen a matcher.
          </p>
          <div class="form-grid">
            <label for="silence-type">Type</label>
            <input id="silence-type" value={type} onInput={(event) => setType(value(event))} />
            <label for="silence-subject">Subject</label>
            <input id="silence-subject" value={subject} onInput={(event) => setSubject(value(event))} />
            <label for="silence-duration">Duration</label>
            <input
              id="silence-duration"
              required
              value={duration}
              aria-describedby="silence-duration-hint"
              onInput={(event) => setDuration(value(event))}
            />
            <span id="silence-duration-hint" class="hint">
              such as 30m, 2h, 1d (at most a year)
            </span>
            <label for="silence-comment">Comment</label>
            <input
              id="silence-comment"
              required
              placeholder="why"
              value={comment}
              onInput={(event) => setComment(value(event))}
            />
          </div>
          <ErrorLine error={error} />
        </Confirm>
      ) : null}

      {dialog === 'expire' && silenceId ? (
        <Confirm
          title="Expire the silence"
          confirmLabel="Expire silence"
          destructive
          busy={busy}
          onCancel={() => setDialog(undefined)}
          onConfirm={() =>
            run(() => api(`/api/silences/${encodeURIComponent(silenceId)}`, { method: 'DELETE' }), true)
          }
        >
          <p>
            Silence <code>{silenceId}</code> ends now: everything it mutes notifies again, this incident
            included.
          </p>
          <ErrorLine error={error} />
        </Confirm>
      ) : null}
    </span>
  );
}
