import './silences.css';
import { useState } from 'preact/hooks';
import { Confirm } from '../components/confirm.js';
import { ErrorLine } from '../components/error-line.js';
import { Time } from '../components/time-cell.js';
import { ApiError, api } from '../lib/api.js';
import { href } from '../lib/router.js';
import { type Access, mayOperate } from '../lib/session.js';
import { silencePrefill } from '../lib/silence-prefill.js';
import { useApi } from '../lib/use-api.js';
import type { PageProps } from './index.js';

/**
 * Silences (`/api/silences`): the pending and active ones (expired too on request), creating one
 * from a form, expiring one; and the configured maintenance windows (`/api/maintenance`,
 * read-only). `#/silences/new?matchers=…&comment=…` (also `type=…&subject=…`) opens the form
 * prefilled (silence-prefill.ts): the incidents page and chat messages link here.
 */

type MatchValue = string | string[];
interface Matchers {
  type?: MatchValue;
  subject?: MatchValue;
  severity?: string;
  tags?: Record<string, MatchValue>;
}

interface SilenceView {
  id: string;
  matchers: Matchers;
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
  state: 'pending' | 'active' | 'expired';
}

interface Occurrence {
  startsAt: string;
  endsAt: string;
}

interface MaintenanceView {
  name: string;
  schedule: string;
  timeZone: string;
  durationMs: number;
  match: Matchers | null;
  active: Occurrence | null;
  next: Occurrence | null;
}

export function SilencesPage({ route, access }: PageProps) {
  const creating = route.params[0] === 'new';
  const [showExpired, setShowExpired] = useState(false);
  const silences = useApi(
    (signal) =>
      api<{ items: SilenceView[] }>('/api/silences', { query: { all: showExpired || undefined }, signal }),
    [showExpired],
  );
  const [expiring, setExpiring] = useState<SilenceView | undefined>();
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<ApiError | undefined>();
  const operate = mayOperate(access);

  return (
    <section aria-labelledby="page-title" class="silences">
      <h1 id="page-title">Silences</h1>
      {creating ? (
        <SilenceForm
          // A new "silence this" link followed while the form is open fills it anew.
          key={route.query.toString()}
          access={access}
          prefill={route.query}
          onCreated={() => {
            window.location.hash = href('silences');
            silences.reload();
          }}
        />
      ) : (
        <div class="toolbar">
          {operate ? (
            <a class="button primary" href={href('silences', 'new')}>
              New silence
            </a>
          ) : null}
          <label class="inline">
            <input
              type="checkbox"
              checked={showExpired}
              onChange={(event) => setShowExpired((event.target as HTMLInputElement).checked)}
            />
            Show expired
          </label>
        </div>
      )}
      <ErrorLine error={silences.error ?? actionError} />
      <SilenceTable
        items={silences.value?.items}
        loading={silences.loading}
        operate={operate}
        onExpire={(silence) => {
          setActionError(undefined);
          setExpiring(silence);
        }}
      />
      {expiring ? (
        <Confirm
          title="Expire this silence?"
          confirmLabel="Expire"
          destructive
          busy={busy}
          onCancel={() => setExpiring(undefined)}
          onConfirm={async () => {
            setBusy(true);
            try {
              await api(`/api/silences/${encodeURIComponent(expiring.id)}`, { method: 'DELETE' });
            } catch (error) {
              setActionError(error as ApiError);
            } finally {
              setBusy(false);
              setExpiring(undefined);
              silences.reload();
            }
          }}
        >
          <p>
            What <code>{matcherText(expiring.matchers)}</code> matches is notified again from now on. The
            silence is kept and listed under “Show expired”.
          </p>
        </Confirm>
      ) : null}
      <MaintenanceWindows />
    </section>
  );
}

function SilenceTable(props: {
  items: SilenceView[] | undefined;
  loading: boolean;
  operate: boolean;
  onExpire: (silence: SilenceView) => void;
}) {
  if (!props.items) return props.loading ? <p class="hint">Loading…</p> : null;
  if (props.items.length === 0) return <p class="hint">No silences.</p>;
  return (
    <div class="table-scroll">
      <table aria-label="Silences">
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Matchers</th>
            <th scope="col">Starts</th>
            <th scope="col">Ends</th>
            <th scope="col">Created by</th>
            <th scope="col">Comment</th>
            {props.operate ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {props.items.map((silence) => (
            <tr key={silence.id} data-silence={silence.id}>
              <td>
                <span class={`state state-${silence.state}`}>{silence.state}</span>
              </td>
              <td>
                <MatcherList matchers={silence.matchers} />
              </td>
              <td>
                <Time iso={silence.startsAt} />
              </td>
              <td>
                <Time iso={silence.endsAt} />
              </td>
              <td>{silence.createdBy}</td>
              <td class="comment">{silence.comment}</td>
              {props.operate ? (
                <td>
                  {silence.state === 'expired' ? null : (
                    <button
                      type="button"
                      onClick={() => props.onExpire(silence)}
                      aria-label={`Expire silence ${matcherText(silence.matchers)}`}
                    >
                      Expire
                    </button>
                  )}
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `type=vehicle.vpn.*`, `site=north`: the matchers as label=value pairs, as the form takes them. */
function matcherPairs(matchers: Matchers): [string, string][] {
  const pairs: [string, string][] = [];
  const add = (label: string, value: MatchValue | undefined) => {
    if (value === undefined) return;
    for (const one of Array.isArray(value) ? value : [value]) pairs.push([label, one]);
  };
  add('type', matchers.type);
  add('subject', matchers.subject);
  add('severity', matchers.severity);
  for (const [name, value] of Object.entries(matchers.tags ?? {})) add(name, value);
  return pairs;
}

function matcherText(matchers: Matchers): string {
  return matcherPairs(matchers)
    .map(([label, value]) => `${label}=${value}`)
    .join(' ');
}

function MatcherList({ matchers }: { matchers: Matchers }) {
  return (
    <ul class="matchers">
      {matcherPairs(matchers).map(([label, value]) => (
        <li key={`${label}=${value}`}>
          <code>
            {label}={value}
          </code>
        </li>
      ))}
    </ul>
  );
}

// --- the form --------------------------------------------------------------------------------

const FIELDS = ['matchers', 'duration', 'endsAt', 'createdBy', 'comment'] as const;
type Field = (typeof FIELDS)[number];
type Problems = Partial<Record<Field | 'other', string[]>>;

/**
 * One `label=value` a line: `type`, `subject` and `severity` are the built-in labels; any other
 * label is an entity tag. Several lines of one label match any of their values.
 */
export function parseMatcherLines(text: string): { matchers: Matchers } | { problems: string[] } {
  const matchers: Matchers = {};
  const problems: string[] = [];
  const append = (current: MatchValue | undefined, value: string): MatchValue =>
    current === undefined ? value : [...(Array.isArray(current) ? current : [current]), value];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    const pair = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+)$/.exec(line);
    if (!pair) {
      problems.push(`line ${index + 1}: expected label=value, like type=vehicle.vpn.*; got "${line}"`);
      return;
    }
    const [, label = '', value = ''] = pair;
    if (label === 'type' || label === 'subject') matchers[label] = append(matchers[label], value.trim());
    else if (label === 'severity') matchers.severity = value.trim();
    else matchers.tags = { ...matchers.tags, [label]: append(matchers.tags?.[label], value.trim()) };
  });
  return problems.length > 0 ? { problems } : { matchers };
}

/** The API's problems (`body.duration: expected …`) by the form field they name. */
function problemsByField(error: ApiError): Problems {
  const list = (error.details as { problems?: unknown } | undefined)?.problems;
  const lines = Array.isArray(list) ? list.map(String) : [error.message];
  const byField: Problems = {};
  for (const line of lines) {
    const name = /^body\.([A-Za-z]+)/.exec(line)?.[1];
    const field: Field | 'other' = FIELDS.find((candidate) => candidate === name) ?? 'other';
    const text = field === 'other' ? line : line.replace(/^body\.[A-Za-z]+\.?/, '').replace(/^:\s*/, '');
    byField[field] = [...(byField[field] ?? []), text];
  }
  return byField;
}

function SilenceForm(props: { access: Access; prefill: URLSearchParams; onCreated: () => void }) {
  const [prefill] = useState(() => silencePrefill(props.prefill));
  const [matchers, setMatchers] = useState(prefill.matchers);
  const [duration, setDuration] = useState(prefill.duration);
  const [endsAt, setEndsAt] = useState('');
  const [createdBy, setCreatedBy] = useState(() =>
    props.access.kind === 'session' ? props.access.session.actor : '',
  );
  const [comment, setComment] = useState(prefill.comment);
  const [problems, setProblems] = useState<Problems>({});
  const [pending, setPending] = useState<Record<string, unknown> | undefined>();
  const [busy, setBusy] = useState(false);

  const body = (): Record<string, unknown> | undefined => {
    const parsed = parseMatcherLines(matchers);
    if ('problems' in parsed) {
      setProblems({ matchers: parsed.problems });
      return undefined;
    }
    return {
      matchers: parsed.matchers,
      ...(duration.trim() ? { duration: duration.trim() } : {}),
      // datetime-local is the viewer's wall clock; the API takes an instant.
      ...(endsAt ? { endsAt: new Date(endsAt).toISOString() } : {}),
      createdBy: createdBy.trim(),
      comment: comment.trim(),
    };
  };

  const submit = async (request: Record<string, unknown>) => {
    setBusy(true);
    try {
      await api('/api/silences', { method: 'POST', body: request });
      setPending(undefined);
      props.onCreated();
    } catch (error) {
      setPending(undefined);
      setProblems(
        error instanceof ApiError && error.status === 400
          ? problemsByField(error)
          : { other: [(error as Error).message] },
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="silence-form"
      aria-labelledby="silence-form-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        setProblems({});
        const request = body();
        if (request) setPending(request);
      }}
    >
      <h2 id="silence-form-title">New silence</h2>
      <FormField
        id="silence-matchers"
        label="Matchers"
        problems={problems.matchers}
        hint={
          <>
            One <code>label=value</code> a line: <code>type</code>, <code>subject</code>,{' '}
            <code>severity</code> (a minimum), or an entity tag (<code>site=north</code>). <code>*</code>{' '}
            matches any run of characters; several lines of one label match any of them.
          </>
        }
        control={(described) => (
          <textarea
            {...described}
            rows={3}
            value={matchers}
            placeholder={'type=vehicle.vpn.*\nsubject=vehicle/veh-0003'}
            onInput={(event) => setMatchers((event.target as HTMLTextAreaElement).value)}
          />
        )}
      />
      <div class="form-row">
        <FormField
          id="silence-duration"
          label="Duration"
          problems={problems.duration}
          hint={
            <>
              like <code>30m</code>, <code>2h</code>, <code>1d</code>
            </>
          }
          control={(described) => (
            <input
              {...described}
              value={duration}
              placeholder="2h"
              onInput={(event) => setDuration((event.target as HTMLInputElement).value)}
            />
          )}
        />
        <FormField
          id="silence-ends"
          label="or ends at"
          problems={problems.endsAt}
          hint="your local time"
          control={(described) => (
            <input
              {...described}
              type="datetime-local"
              value={endsAt}
              onInput={(event) => {
                const value = (event.target as HTMLInputElement).value;
                setEndsAt(value);
                if (value) setDuration('');
              }}
            />
          )}
        />
      </div>
      <FormField
        id="silence-created-by"
        label="Created by"
        problems={problems.createdBy}
        control={(described) => (
          <input
            {...described}
            value={createdBy}
            onInput={(event) => setCreatedBy((event.target as HTMLInputElement).value)}
          />
        )}
      />
      <FormField
        id="silence-comment"
        label="Comment"
        problems={problems.comment}
        control={(described) => (
          <textarea
            {...described}
            rows={2}
            value={comment}
            placeholder="why: a ticket, the work going on"
            onInput={(event) => setComment((event.target as HTMLTextAreaElement).value)}
          />
        )}
      />
      {problems.other ? (
        <p class="error" role="alert">
          {problems.other.join('; ')}
        </p>
      ) : null}
      <div class="actions">
        <a href={href('silences')}>Cancel</a>
        <button type="submit" class="primary">
          Create silence
        </button>
      </div>
      {pending ? (
        <Confirm
          title="Create this silence?"
          confirmLabel="Create"
          busy={busy}
          onCancel={() => setPending(undefined)}
          onConfirm={() => submit(pending)}
        >
          <p>
            Notifications of what <code>{matcherText(pending.matchers as Matchers)}</code> matches are held
            back {pending.endsAt ? 'until the end time' : `for ${String(pending.duration ?? '')}`}. Incidents
            still firing then are announced.
          </p>
        </Confirm>
      ) : null}
    </form>
  );
}

/** What a field's control carries: its hint and the API's problems, read out with it. */
interface Described {
  id: string;
  'aria-describedby': string;
  'aria-invalid'?: 'true';
}

/** A labelled field with its hint and the API's problems right below it (`aria-describedby`). */
function FormField(props: {
  id: string;
  label: string;
  hint?: preact.ComponentChildren;
  problems: string[] | undefined;
  control: (described: Described) => preact.ComponentChildren;
}) {
  const hintId = `${props.id}-hint`;
  const errorId = `${props.id}-error`;
  const describedBy = [props.hint ? hintId : '', props.problems ? errorId : ''].filter(Boolean).join(' ');
  return (
    <div class="field" data-invalid={props.problems ? 'true' : undefined}>
      <label for={props.id}>{props.label}</label>
      {props.control({
        id: props.id,
        'aria-describedby': describedBy,
        ...(props.problems ? { 'aria-invalid': 'true' as const } : {}),
      })}
      {props.hint ? (
        <span class="hint" id={hintId}>
          {props.hint}
        </span>
      ) : null}
      {props.problems ? (
        <p class="field-error" id={errorId} role="alert">
          {props.problems.join('; ')}
        </p>
      ) : null}
    </div>
  );
}

// --- maintenance windows ------------------------------------------------------------------------

function MaintenanceWindows() {
  const windows = useApi((signal) => api<{ items: MaintenanceView[] }>('/api/maintenance', { signal }), []);
  return (
    <section aria-labelledby="maintenance-title">
      <h2 id="maintenance-title">Maintenance windows</h2>
      <p class="hint">
        From the config (<code>notifications.maintenance</code>): while a window is open, what it matches is
        not notified. Change them in the config file.
      </p>
      <ErrorLine error={windows.error} />
      {windows.value && windows.value.items.length === 0 ? (
        <p class="hint">No maintenance windows are configured.</p>
      ) : null}
      {windows.value && windows.value.items.length > 0 ? (
        <div class="table-scroll">
          <table aria-label="Maintenance windows">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Now</th>
                <th scope="col">Next opens</th>
                <th scope="col">Schedule</th>
                <th scope="col">Open for</th>
                <th scope="col">Matches</th>
              </tr>
            </thead>
            <tbody>
              {windows.value.items.map((window) => (
                <tr key={window.name}>
                  <td>{window.name}</td>
                  <td>
                    {window.active ? (
                      <span class="state state-active">
                        open until <Time iso={window.active.endsAt} />
                      </span>
                    ) : (
                      <span class="hint">closed</span>
                    )}
                  </td>
                  <td>
                    {window.next ? (
                      <Time iso={window.next.startsAt} />
                    ) : (
                      <span class="hint">not within a year</span>
                    )}
                  </td>
                  <td>
                    <code>{window.schedule}</code> <span class="hint">{window.timeZone}</span>
                  </td>
                  <td>{formatMs(window.durationMs)}</td>
                  <td>
                    {window.match ? (
                      <MatcherList matchers={window.match} />
                    ) : (
                      <span class="hint">everything</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

/** `4h`, `1d 2h`, `90s`: a window's length as the config writes it. */
function formatMs(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of units) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join(' ') || `${ms}ms`;
}
