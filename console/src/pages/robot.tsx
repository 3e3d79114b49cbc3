import { useEffect, useState } from 'preact/hooks';
import { ErrorLine } from '../components/error-line.js';
import { api } from '../lib/api.js';
import { type ConfigPart, entityPath, type RobotView, type StatusPair } from '../lib/fleet.js';
import { mayOperate } from '../lib/session.js';
import { age } from '../lib/time.js';
import { useApi } from '../lib/use-api.js';
import {
  Action,
  type ActionProps,
  EntityFrame,
  type Outcome,
  OutcomeLine,
  Reading,
  RoleNote,
  useEntity,
} from './entity-parts.js';
import type { PageProps } from './index.js';

/**
 * `#/robot/<id>`: the robot as fleetwatch last observed it; the teleoperation lease (release,
 * forced release, transfer), motion commands (STOP, PAUSE, RESUME) and loading a route or a zone
 * set from the robot's own lists, each through the API's robot operations
 * (`/api/robots/{deviceId}/…`, audited there); its open incidents and its events, live.
 */

/** What a robot operation answers (README "Robot operations"). */
interface RobotAnswer {
  deviceId: string;
  operation: string;
  live: { status?: string; message?: string; data?: unknown } | null;
}

/** `motion_command` numbers of `POST /motion-command`. */
const MOTION = [
  { command: 0, label: 'STOP', destructive: true, what: 'stops the robot and cancels every queued command' },
  { command: 1, label: 'PAUSE', destructive: false, what: 'pauses the robot where it is' },
  { command: 2, label: 'RESUME', destructive: false, what: 'resumes what the robot was doing' },
] as const;

const pair = (value: StatusPair | null) =>
  value ? [value.text, value.status === null ? null : `(${value.status})`].filter(Boolean).join(' ') : '—';

const part = (value: ConfigPart | null) => value?.name ?? '—';

/** The names in a robot's list of routes or zone sets (documents with a `name`, or names). */
function namesOf(answer: RobotAnswer): string[] {
  const data = answer.live?.data;
  const list = Array.isArray(data)
    ? data
    : data && typeof data === 'object'
      ? (Object.values(data).find(Array.isArray) ?? [])
      : [];
  return list.flatMap((item: unknown) => {
    if (typeof item === 'string') return [item];
    const name = (item as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? [name] : [];
  });
}

function said(answer: RobotAnswer, fallback: string): string {
  return answer.live?.message ? `${fallback}: ${answer.live.message}` : fallback;
}

export function RobotPage({ route, access }: PageProps) {
  const id = route.params[0] ?? '';
  const base = entityPath('robot', id);
  const entity = useEntity<RobotView>('robot', id);
  const [outcome, setOutcome] = useState<Outcome>();
  const [transferTo, setTransferTo] = useState('');

  useEffect(() => {
    setOutcome(undefined);
  }, [id]);

  /** Sends one robot operation; the snapshot is read again after it. */
  const send = (path: string, text: string, body?: unknown, query?: Record<string, string>) => async () => {
    const answer = await api<RobotAnswer>(`${base}${path}`, {
      method: 'POST',
      ...(body === undefined ? {} : { body }),
      ...(query ? { query } : {}),
    });
    entity.refresh();
    return said(answer, text);
  };

  const action = { access, onOutcome: setOutcome };
  return (
    <EntityFrame
      kind="robot"
      id={id}
      entity={entity}
      readings={(view) => (
        <>
          <Reading label="Health">
            {view.health.up === null ? (
              '—'
            ) : view.health.up ? (
              <span class="ok">up</span>
            ) : (
              <span class="bad">
                down{view.health.downSince ? ` since ${age(view.health.downSince)}` : ''}
              </span>
            )}
          </Reading>
          <Reading label="Autonomy">{pair(view.autonomy)}</Reading>
          <Reading label="Navigation">{pair(view.navigation)}</Reading>
          <Reading label="Vehicle state">{view.state ?? '—'}</Reading>
          <Reading label="Lease holder">
            <span data-testid="lease-holder">{view.lease ? (view.lease.holderId ?? 'none') : '—'}</span>
          </Reading>
          <Reading label="Site">{part(view.config.activeSite)}</Reading>
          <Reading label="Route">{part(view.config.loadedRoute)}</Reading>
          <Reading label="Zone set">{part(view.config.loadedZoneSet)}</Reading>
          <Reading label="Command queue">
            {view.commandQueue.length ?? '—'}
            {view.commandQueue.backlogSince ? (
              <span class="bad"> · backlog since {age(view.commandQueue.backlogSince)}</span>
            ) : null}
          </Reading>
        </>
      )}
    >
      <section aria-labelledby="actions-title">
        <h2 id="actions-title">Operations</h2>
        <RoleNote access={access} />
        <fieldset class="actions-group">
          <legend>Lease</legend>
          <Action
            {...action}
            label="Release lease"
            title={`Release the lease of ${id}?`}
            run={send('/teleop-control/release', 'Lease released')}
          >
            <p>The teleoperation lease is released, if fleetwatch's client holds it.</p>
          </Action>
          <Action
            {...action}
            label="Force release"
            destructive
            title={`Force the lease of ${id} free?`}
            run={send('/teleop-control/release', 'Lease released by force', undefined, { force: 'true' })}
          >
            <p>The lease is released even when another user holds it; their control ends now.</p>
          </Action>
        </fieldset>
        <fieldset class="actions-group">
          <legend>Lease transfer</legend>
          <input
            aria-label="Transfer the lease to"
            placeholder="user to transfer to"
            value={transferTo}
            disabled={!mayOperate(access)}
            onInput={(event) => setTransferTo((event.target as HTMLInputElement).value)}
          />
          <Action
            {...action}
            label="Transfer lease"
            ready={transferTo.trim() !== ''}
            title={`Transfer the lease of ${id}?`}
            run={send('/teleop-control/transfer', `Lease transferred to ${transferTo.trim()}`, {
              to: transferTo.trim(),
            })}
          >
            <p>
              The lease goes to <strong>{transferTo.trim()}</strong>.
            </p>
          </Action>
        </fieldset>
        <fieldset class="actions-group">
          <legend>Motion</legend>
          {MOTION.map((motion) => (
            <Action
              {...action}
              key={motion.label}
              label={motion.label}
              destructive={motion.destructive}
              title={`${motion.label} ${id}?`}
              run={send('/motion-command', `${motion.label} sent`, { motion_command: motion.command })}
            >
              <p>
                {motion.label} {motion.what}.
              </p>
            </Action>
          ))}
        </fieldset>
        {LOADABLE.map((loadable) => (
          <LoadFromList
            key={loadable.collection}
            {...loadable}
            base={base}
            id={id}
            action={action}
            send={send}
          />
        ))}
        <OutcomeLine outcome={outcome} />
      </section>
    </EntityFrame>
  );
}

/** What a robot loads from its own lists: routes and zone sets. */
const LOADABLE = [
  { collection: 'routes', noun: 'route', legend: 'Route', effect: 'navigates by route' },
  { collection: 'zone_sets', noun: 'zone set', legend: 'Zone set', effect: 'uses zone set' },
] as const;

/**
 * Loading one of the robot's routes or zone sets: the robot's own list, asked live (only for a
 * session that may load one), a choice from it, and the confirmed load.
 */
function LoadFromList(props: {
  collection: string;
  noun: string;
  legend: string;
  effect: string;
  base: string;
  id: string;
  action: Pick<ActionProps, 'access' | 'onOutcome'>;
  send: (path: string, text: string) => () => Promise<string>;
}) {
  const { collection, noun, base, id } = props;
  const operate = mayOperate(props.action.access);
  const [chosen, setChosen] = useState('');
  const names = useApi(
    (signal) =>
      operate ? api<RobotAnswer>(`${base}/${collection}`, { signal }).then(namesOf) : Promise.resolve([]),
    [base, collection, operate],
  );
  const Noun = noun.charAt(0).toUpperCase() + noun.slice(1);
  return (
    <fieldset class="actions-group">
      <legend>{props.legend}</legend>
      <select
        aria-label={`${Noun} to load`}
        value={chosen}
        disabled={!operate}
        onChange={(event) => setChosen((event.target as HTMLSelectElement).value)}
      >
        <option value="">{names.loading ? `${noun}s…` : `choose a ${noun}`}</option>
        {names.value?.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      <Action
        {...props.action}
        label={`Load ${noun}`}
        ready={chosen !== ''}
        title={`Load ${noun} ${chosen} on ${id}?`}
        run={props.send(`/${collection}/${encodeURIComponent(chosen)}/load`, `${Noun} ${chosen} loaded`)}
      >
        <p>
          The robot {props.effect} {chosen} from now on.
        </p>
      </Action>
      <ErrorLine error={names.error} />
    </fieldset>
  );
}
