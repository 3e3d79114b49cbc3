import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../lib/api.js';
import { entityPath, type VehicleView } from '../lib/fleet.js';
import { age } from '../lib/time.js';
import {
  Action,
  EntityFrame,
  type Outcome,
  OutcomeLine,
  Reading,
  RoleNote,
  useEntity,
} from './entity-parts.js';
import type { PageProps } from './index.js';

/**
 * `#/vehicle/<id>`: the vehicle as fleetwatch last observed it, each reading with its time; power
 * on/off (waiting for the vehicle to report the state, with the wait shown as it goes); its open
 * incidents and its events, live.
 */

/** How long the page waits for the vehicle to report the state (the API's `timeout`). */
export const POWER_WAIT = '60s';

interface PowerAnswer {
  vehicleId: string;
  requested: 'on' | 'off';
  outcome: 'accepted' | 'completed' | 'timed_out';
  warning?: string;
  elapsedMs?: number;
  lastError?: string;
}

type PowerProgress =
  | { phase: 'waiting'; target: 'on' | 'off'; startedAt: number }
  | { phase: 'done'; target: 'on' | 'off'; text: string; good: boolean; warning?: string };

function useTicker(active: boolean): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function VehiclePage({ route, access }: PageProps) {
  const id = route.params[0] ?? '';
  const entity = useEntity<VehicleView>('vehicle', id);
  const [outcome, setOutcome] = useState<Outcome>();
  const [progress, setProgress] = useState<PowerProgress | undefined>();
  const now = useTicker(progress?.phase === 'waiting');

  useEffect(() => {
    setProgress(undefined);
    setOutcome(undefined);
  }, [id]);

  const power = (target: 'on' | 'off') => async () => {
    setProgress({ phase: 'waiting', target, startedAt: Date.now() });
    api<PowerAnswer>(`${entityPath('vehicle', id)}/power/${target}`, {
      method: 'POST',
      query: { wait: true, timeout: POWER_WAIT },
    }).then(
      (answer) => {
        const took = answer.elapsedMs === undefined ? '' : ` after ${seconds(answer.elapsedMs)}`;
        setProgress({
          phase: 'done',
          target,
          good: answer.outcome === 'completed',
          text:
            answer.outcome === 'completed'
              ? `completed${took}: the vehicle reports ${target}`
              : `timed out${took}: the command stands, the vehicle has not reported ${target} yet${answer.lastError ? ` (${answer.lastError})` : ''}`,
          ...(answer.warning ? { warning: answer.warning } : {}),
        });
        entity.refresh();
      },
      (error: unknown) => {
        // The request itself failed: the progress line says so, and no green "requested" stays beside it.
        setOutcome(undefined);
        const replaced = error instanceof ApiError && error.code === 'power_command_failed';
        setProgress({
          phase: 'done',
          target,
          good: false,
          text: replaced
            ? `replaced or dropped: ${error.message}`
            : `failed: ${(error as Error).message}${error instanceof ApiError ? ` (${error.code})` : ''}`,
        });
      },
    );
    return `Power ${target} requested`;
  };

  // The fleet service refuses to switch such a vehicle (404): not offered, rather than failing.
  const noPowerControl =
    entity.view.value?.power.powerCapable === false
      ? 'This vehicle has no power control: the fleet service cannot switch it'
      : undefined;

  return (
    <EntityFrame
      kind="vehicle"
      id={id}
      entity={entity}
      readings={(view) => (
        <>
          <Reading label="VPN">
            {view.vpn.connected === null ? (
              '—'
            ) : view.vpn.connected ? (
              <span class="ok">connected</span>
            ) : (
              <span class="bad">
                disconnected
                {view.vpn.disconnectedSince ? ` since ${age(view.vpn.disconnectedSince)}` : ''}
              </span>
            )}
          </Reading>
          <Reading label="Address">
            <span class="mono">{view.vpn.ipAddress ?? '—'}</span>
          </Reading>
          <Reading label="Power" at={view.power.updatedAt}>
            <span data-testid="power-state">{view.power.state ?? '—'}</span>
            {view.power.reachable === false ? <span class="bad"> · unreachable</span> : null}
            {view.power.powerCapable === false ? <span class="hint"> · no power control</span> : null}
          </Reading>
          <Reading label="Pending command">
            {view.power.pendingCommand ? (
              <span class={view.power.stuck ? 'bad' : undefined}>
                {view.power.pendingCommand.state}
                {view.power.pendingCommand.since ? ` since ${age(view.power.pendingCommand.since)}` : ''}
                {view.power.stuck ? ' · stuck' : ''}
              </span>
            ) : (
              'none'
            )}
          </Reading>
        </>
      )}
    >
      <section aria-labelledby="actions-title">
        <h2 id="actions-title">Power</h2>
        <RoleNote access={access} />
        {noPowerControl ? <p class="hint">{noPowerControl}.</p> : null}
        <div class="actions-group">
          {(['on', 'off'] as const).map((target) => (
            <Action
              key={target}
              access={access}
              label={`Power ${target}`}
              title={`Power ${id} ${target}?`}
              ready={progress?.phase !== 'waiting'}
              unavailable={noPowerControl}
              run={power(target)}
              onOutcome={setOutcome}
            >
              <p>
                The fleet service is asked to switch {id} {target}; the page waits up to {POWER_WAIT} for the
                vehicle to report it. The request is logged with your name.
              </p>
            </Action>
          ))}
        </div>
        <OutcomeLine outcome={outcome} />
        {progress ? (
          <p
            role="status"
            aria-label="Power progress"
            class={progress.phase === 'done' && !progress.good ? 'bad' : ''}
          >
            Power {progress.target}: requested →{' '}
            {progress.phase === 'waiting' ? `waiting… (${seconds(now - progress.startedAt)})` : progress.text}
            {progress.phase === 'done' && progress.warning ? (
              <span class="hint"> · warning: {progress.warning}</span>
            ) : null}
          </p>
        ) : null}
      </section>
    </EntityFrame>
  );
}
