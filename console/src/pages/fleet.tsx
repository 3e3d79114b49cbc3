import './fleet.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ErrorLine } from '../components/error-line.js';
import { Time } from '../components/time-cell.js';
import { VirtualRows } from '../components/virtual-rows.js';
import type { EntityKind, EntityView, ListView, RobotView, StatusPair, VehicleView } from '../lib/fleet.js';
import { href } from '../lib/router.js';
import { age } from '../lib/time.js';
import { type FleetRows, useFleetChanges, useFleetRows } from './fleet-data.js';
import type { PageProps } from './index.js';

/**
 * `#/fleet`: every vehicle and robot as fleetwatch last observed it, in two tabs. The whole fleet
 * is loaded page by page (a progress line while it comes) and kept in memory; filtering and
 * sorting happen here, and only the rows in view are in the DOM (VirtualRows), so 40,000 entities
 * stay responsive. Entities named by events on the stream are re-fetched a second later.
 */

const ROW_HEIGHT = 34;

interface Column<T> {
  key: string;
  label: string;
  /** A grid track (`minmax(120px, 1fr)`). */
  width: string;
  /** What the column sorts by. */
  sort: (row: T) => string | number;
  cell: (row: T, now: number) => ComponentChildren;
}

interface StateFilter<T> {
  key: string;
  label: string;
  test: (row: T) => boolean;
}

interface KindTable<T> {
  kind: EntityKind;
  tab: string;
  columns: Column<T>[];
  filters: StateFilter<T>[];
  /** The text a filter word is looked for in, and what the filter box suggests. */
  text: (row: T) => string;
  hint: string;
}

const pair = (value: StatusPair | null): string =>
  value ? (value.text ?? (value.status === null ? '—' : String(value.status))) : '—';

function yesNo(value: boolean | null, yes: string, no: string, badClass = 'bad'): ComponentChildren {
  if (value === null) return <span class="hint">—</span>;
  return value ? <span class="ok">{yes}</span> : <span class={badClass}>{no}</span>;
}

function entityLink(kind: EntityKind, id: string) {
  return (
    <a href={href(kind, id)} class="mono">
      {id}
    </a>
  );
}

function lastSeen(iso: string | null, now: number) {
  return (
    <span>
      <Time iso={iso} /> <span class="hint">{iso ? `(${age(iso, now)})` : ''}</span>
    </span>
  );
}

const VEHICLES: KindTable<VehicleView> = {
  kind: 'vehicle',
  tab: 'Vehicles',
  columns: [
    {
      key: 'id',
      label: 'Vehicle',
      width: 'minmax(110px, 1.2fr)',
      sort: (row) => row.id,
      cell: (row) => entityLink('vehicle', row.id),
    },
    {
      key: 'vpn',
      label: 'VPN',
      width: 'minmax(90px, 0.8fr)',
      sort: (row) => (row.vpn.connected === null ? 2 : row.vpn.connected ? 1 : 0),
      cell: (row) => yesNo(row.vpn.connected, 'connected', row.vpn.alerting ? 'down' : 'dropped'),
    },
    {
      key: 'address',
      label: 'Address',
      width: 'minmax(110px, 1fr)',
      sort: (row) => row.vpn.ipAddress ?? '',
      cell: (row) => <span class="mono">{row.vpn.ipAddress ?? '—'}</span>,
    },
    {
      key: 'power',
      label: 'Power',
      width: 'minmax(110px, 1fr)',
      sort: (row) => `${row.power.reachable === false ? 0 : 1}${row.power.state ?? 'zz'}`,
      cell: (row) => (
        <span>
          {row.power.state ?? '—'}
          {row.power.reachable === false ? <span class="bad"> · unreachable</span> : null}
          {row.power.powerCapable === false ? <span class="hint"> · no control</span> : null}
        </span>
      ),
    },
    {
      key: 'pending',
      label: 'Pending command',
      width: 'minmax(140px, 1.2fr)',
      sort: (row) => row.power.pendingCommand?.since ?? '~',
      cell: (row, now) => {
        const pending = row.power.pendingCommand;
        if (!pending) return <span class="hint">—</span>;
        return (
          <span class={row.power.stuck ? 'bad' : undefined}>
            {pending.state} {pending.since ? `since ${age(pending.since, now)}` : ''}
            {row.power.stuck ? ' · stuck' : ''}
          </span>
        );
      },
    },
    {
      key: 'seen',
      label: 'Last seen',
      width: 'minmax(220px, 1.6fr)',
      sort: (row) => row.lastSeenAt ?? '',
      cell: (row, now) => lastSeen(row.lastSeenAt, now),
    },
  ],
  filters: [
    { key: 'vpn-down', label: 'VPN down', test: (row) => row.vpn.connected === false },
    { key: 'unreachable', label: 'Unreachable', test: (row) => row.power.reachable === false },
    { key: 'pending', label: 'Command pending', test: (row) => row.power.pendingCommand !== null },
    { key: 'missing', label: 'Missing from the list', test: (row) => row.presence.status === 'missing' },
    { key: 'error', label: 'Last poll failed', test: (row) => row.lastError !== null },
  ],
  hint: 'id, address, power state…',
  text: (row) =>
    [row.id, row.vpn.ipAddress, row.power.state, row.vpn.connected === false ? 'vpn down' : '']
      .join(' ')
      .toLowerCase(),
};

const ROBOTS: KindTable<RobotView> = {
  kind: 'robot',
  tab: 'Robots',
  columns: [
    {
      key: 'id',
      label: 'Robot',
      width: 'minmax(100px, 1.1fr)',
      sort: (row) => row.id,
      cell: (row) => entityLink('robot', row.id),
    },
    {
      key: 'health',
      label: 'Health',
      width: 'minmax(70px, 0.6fr)',
      sort: (row) => (row.health.up === null ? 2 : row.health.up ? 1 : 0),
      cell: (row) => yesNo(row.health.up, 'up', 'down'),
    },
    {
      key: 'autonomy',
      label: 'Autonomy',
      width: 'minmax(90px, 0.9fr)',
      sort: (row) => pair(row.autonomy),
      cell: (row) => pair(row.autonomy),
    },
    {
      key: 'navigation',
      label: 'Navigation',
      width: 'minmax(90px, 0.9fr)',
      sort: (row) => pair(row.navigation),
      cell: (row) => pair(row.navigation),
    },
    {
      key: 'state',
      label: 'Vehicle state',
      width: 'minmax(90px, 0.9fr)',
      sort: (row) => row.state ?? '',
      cell: (row) => row.state ?? '—',
    },
    {
      key: 'lease',
      label: 'Lease holder',
      width: 'minmax(100px, 1fr)',
      sort: (row) => row.lease?.holderId ?? '',
      cell: (row) => row.lease?.holderId ?? <span class="hint">none</span>,
    },
    {
      key: 'site',
      label: 'Site',
      width: 'minmax(80px, 0.9fr)',
      sort: (row) => row.config.activeSite?.name ?? '',
      cell: (row) => row.config.activeSite?.name ?? '—',
    },
    {
      key: 'route',
      label: 'Route',
      width: 'minmax(80px, 0.9fr)',
      sort: (row) => row.config.loadedRoute?.name ?? '',
      cell: (row) => row.config.loadedRoute?.name ?? '—',
    },
    {
      key: 'zones',
      label: 'Zone set',
      width: 'minmax(80px, 0.9fr)',
      sort: (row) => row.config.loadedZoneSet?.name ?? '',
      cell: (row) => row.config.loadedZoneSet?.name ?? '—',
    },
    {
      key: 'seen',
      label: 'Last seen',
      width: 'minmax(250px, 1.8fr)',
      sort: (row) => row.lastSeenAt ?? '',
      cell: (row, now) => lastSeen(row.lastSeenAt, now),
    },
  ],
  filters: [
    { key: 'down', label: 'Robot down', test: (row) => row.health.up === false },
    { key: 'leased', label: 'Lease held', test: (row) => Boolean(row.lease?.holderId) },
    { key: 'backlog', label: 'Command backlog', test: (row) => row.commandQueue.backlogSince !== null },
    { key: 'missing', label: 'Missing from the list', test: (row) => row.presence.status === 'missing' },
    { key: 'error', label: 'Last poll failed', test: (row) => row.lastError !== null },
  ],
  hint: 'id, state, lease holder, route…',
  text: (row) =>
    [
      row.id,
      row.state,
      row.lease?.holderId,
      row.config.activeSite?.name,
      row.config.loadedRoute?.name,
      row.config.loadedZoneSet?.name,
      pair(row.autonomy),
      pair(row.navigation),
    ]
      .join(' ')
      .toLowerCase(),
};

/** A clock for ages ("3 min ago") that moves on its own. */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

export function FleetPage({ route }: PageProps) {
  const tab: EntityKind = route.query.get('tab') === 'robots' ? 'robot' : 'vehicle';
  const live = useFleetChanges();
  const vehicles = useFleetRows('vehicle', live.changed.vehicle);
  const robots = useFleetRows('robot', live.changed.robot);
  const now = useNow(5_000);
  const counts = (data: FleetRows<EntityKind>) => (data.total ?? data.loaded).toLocaleString('en');
  return (
    <section aria-labelledby="page-title" class="fleet">
      <h1 id="page-title">Fleet</h1>
      <div role="tablist" aria-label="Kind" class="tabs">
        <a role="tab" aria-selected={tab === 'vehicle'} href="#/fleet">
          Vehicles ({counts(vehicles)})
        </a>
        <a role="tab" aria-selected={tab === 'robot'} href="#/fleet?tab=robots">
          Robots ({counts(robots)})
        </a>
      </div>
      <div role="tabpanel" aria-label={tab === 'vehicle' ? 'Vehicles' : 'Robots'}>
        {tab === 'vehicle' ? (
          <FleetTable key="vehicle" table={VEHICLES} data={vehicles} now={now} stream={live.stream} />
        ) : (
          <FleetTable key="robot" table={ROBOTS} data={robots} now={now} stream={live.stream} />
        )}
      </div>
    </section>
  );
}

function FleetTable<T extends EntityView<EntityKind>>({
  table,
  data,
  now,
  stream,
}: {
  table: KindTable<T>;
  data: FleetRows<EntityKind>;
  now: number;
  stream: string;
}) {
  const rows = data.rows as unknown as T[]; // the table of the kind the rows were loaded for
  const [text, setText] = useState('');
  const [only, setOnly] = useState('');
  const [sort, setSort] = useState<{ key: string; descending: boolean }>({ key: 'id', descending: false });

  // Sorted once per load or sort change; a keystroke then only filters the sorted rows.
  const sorted = useMemo(() => {
    const column = table.columns.find((candidate) => candidate.key === sort.key) ?? table.columns[0]!;
    const keyed = rows.map((row) => ({ row, key: column.sort(row) }));
    const direction = sort.descending ? -1 : 1;
    keyed.sort((a, b) => {
      if (a.key < b.key) return -direction;
      if (a.key > b.key) return direction;
      return a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0;
    });
    return keyed.map((entry) => entry.row);
  }, [rows, sort, table]);

  const texts = useMemo(() => new Map(rows.map((row) => [row.id, table.text(row)])), [rows, table]);

  const shown = useMemo(() => {
    const words = text.toLowerCase().split(/\s+/).filter(Boolean);
    const stateFilter = table.filters.find((filter) => filter.key === only);
    if (words.length === 0 && !stateFilter) return sorted;
    return sorted.filter((row) => {
      if (stateFilter && !stateFilter.test(row)) return false;
      const haystack = texts.get(row.id) ?? '';
      return words.every((word) => haystack.includes(word));
    });
  }, [sorted, texts, text, only, table]);

  const noun = table.tab.toLowerCase();
  const columns = table.columns.map((column) => column.width).join(' ');
  return (
    <>
      <div class="toolbar">
        <input
          type="search"
          placeholder={`Filter ${noun}: ${table.hint}`}
          aria-label={`Filter ${noun}`}
          value={text}
          onInput={(event) => setText((event.target as HTMLInputElement).value)}
        />
        <label>
          Show{' '}
          <select value={only} onChange={(event) => setOnly((event.target as HTMLSelectElement).value)}>
            <option value="">all</option>
            {table.filters.map((filter) => (
              <option key={filter.key} value={filter.key}>
                {filter.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={data.reload} disabled={data.loading}>
          Refresh
        </button>
        <span class="hint">
          {data.loadedAt ? `Loaded ${age(new Date(data.loadedAt).toISOString(), now)}` : ''}
          {stream === 'open' ? ' · live' : ' · live updates reconnecting'}
          {data.unfetched > 0 ? ` · ${data.unfetched} changes since, refresh to see them` : ''}
        </span>
      </div>
      {data.loading ? (
        <p class="fleet-progress" role="status">
          <progress max={data.total ?? 1} value={data.loaded} aria-label={`Loading ${noun}`} /> Loading {noun}
          … {data.loaded.toLocaleString('en')}
          {data.total === undefined ? '' : ` of ${data.total.toLocaleString('en')}`}
        </p>
      ) : null}
      <ErrorLine error={data.error} />
      <ListNotice list={data.list} kind={table.kind} now={now} />
      <p class="hint" role="status">
        {shown.length === rows.length
          ? `${rows.length.toLocaleString('en')} ${noun}`
          : `${shown.length.toLocaleString('en')} of ${rows.length.toLocaleString('en')} ${noun}`}
      </p>
      <VirtualRows
        label={table.tab}
        items={shown}
        rowHeight={ROW_HEIGHT}
        columns={columns}
        rowKey={(row) => row.id}
        header={table.columns.map((column) => (
          <th
            key={column.key}
            scope="col"
            aria-sort={sort.key === column.key ? (sort.descending ? 'descending' : 'ascending') : undefined}
          >
            <button
              type="button"
              class="link sort"
              onClick={() =>
                setSort((previous) => ({
                  key: column.key,
                  descending: previous.key === column.key ? !previous.descending : false,
                }))
              }
            >
              {column.label}
              {sort.key === column.key ? (sort.descending ? ' ▼' : ' ▲') : ''}
            </button>
          </th>
        ))}
        row={(row) => table.columns.map((column) => <td key={column.key}>{column.cell(row, now)}</td>)}
      />
    </>
  );
}

/**
 * What the list itself says, when it is not all well: its latest read failed (the table is the
 * fleet as last read), or some of its elements are not as the spec says (what they carry is not
 * watched; README, *One bad record never blinds the fleet*).
 */
function ListNotice({ list, kind, now }: { list: ListView | undefined; kind: EntityKind; now: number }) {
  if (!list) return null;
  const failed = list.lastError;
  const { count, elements } = list.rejected;
  const first = elements[0];
  return (
    <>
      {failed ? (
        <p class="error" role="alert">
          The latest {kind} list failed: {failed.message}. The table shows the {kind}s as last read
          {list.lastSeenAt ? ` (${age(list.lastSeenAt, now)})` : ''}.
        </p>
      ) : null}
      {count > 0 ? (
        <p class="list-rejected" role="status">
          {count.toLocaleString('en')} {count === 1 ? 'element' : 'elements'} of the {kind} list{' '}
          {count === 1 ? 'is' : 'are'} not as the spec says: fleetwatch cannot watch what{' '}
          {count === 1 ? 'it carries' : 'they carry'}
          {kind === 'vehicle' ? ' (the VPN state and address of the vehicles they name)' : ''}.
          {first ? ` First: ${first.message}` : ''}
        </p>
      ) : null}
    </>
  );
}
