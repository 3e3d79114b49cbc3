import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../lib/api.js';
import {
  type EntityKind,
  type EntityView,
  entityPath,
  type ListView,
  loadFleet,
  parseSubject,
} from '../lib/fleet.js';
import { followEvents, type StreamState } from '../lib/stream.js';

/**
 * The fleet page's data: every entity of a kind, loaded page by page, kept fresh from the event
 * stream. An event about an entity marks it changed; a second after the last such event the
 * changed ones are fetched one by one (at most `LIVE_REFETCH_MAX` at a time; beyond that the page
 * says how many changed and offers the full reload instead of 40,000 single requests).
 */

export const LIVE_REFETCH_DELAY_MS = 1_000;
export const LIVE_REFETCH_MAX = 100;

export interface FleetRows<Kind extends EntityKind> {
  rows: EntityView<Kind>[];
  /** Loaded so far, and how many the API said there are. */
  loaded: number;
  total: number | undefined;
  /** The list itself as of the load: its failure, its elements not as the spec says. */
  list: ListView | undefined;
  loading: boolean;
  error: ApiError | undefined;
  /** When the full load started (the data's age is counted from it). */
  loadedAt: number | undefined;
  /** Changes heard on the stream that were too many to fetch one by one. */
  unfetched: number;
  reload: () => void;
}

interface State<Kind extends EntityKind> {
  rows: EntityView<Kind>[];
  loaded: number;
  total: number | undefined;
  list: ListView | undefined;
  loading: boolean;
  error: ApiError | undefined;
  loadedAt: number | undefined;
  unfetched: number;
}

const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, 'network', String((error as Error)?.message ?? error));

export function useFleetRows<Kind extends EntityKind>(kind: Kind, changed: Set<string>): FleetRows<Kind> {
  const [state, setState] = useState<State<Kind>>({
    rows: [],
    loaded: 0,
    total: undefined,
    list: undefined,
    loading: true,
    error: undefined,
    loadedAt: undefined,
    unfetched: 0,
  });
  const [generation, setGeneration] = useState(0);
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );

  useEffect(() => {
    const controller = new AbortController();
    setState({
      rows: [],
      loaded: 0,
      total: undefined,
      list: undefined,
      loading: true,
      error: undefined,
      loadedAt: Date.now(),
      unfetched: 0,
    });
    loadFleet(
      kind,
      (items, loaded, total, list) => {
        if (controller.signal.aborted) return; // a page of the load a refresh replaced
        // A new array each page (the table re-sorts what arrived so far), keeping the rows a live
        // update replaced meanwhile.
        setState((previous) => ({ ...previous, rows: previous.rows.concat(items), loaded, total, list }));
      },
      controller.signal,
    ).then(
      () => setState((previous) => ({ ...previous, loading: false })),
      (error: unknown) => {
        if (!controller.signal.aborted)
          setState((previous) => ({ ...previous, loading: false, error: asApiError(error) }));
      },
    );
    return () => controller.abort();
  }, [kind, generation]);

  // The changed entities of this kind, fetched one by one (see above).
  useEffect(() => {
    if (changed.size === 0) return;
    const ids = [...changed];
    changed.clear();
    if (ids.length > LIVE_REFETCH_MAX) {
      setState((previous) => ({ ...previous, unfetched: previous.unfetched + ids.length }));
      return;
    }
    Promise.all(
      ids.map((id) =>
        api<EntityView<Kind>>(entityPath(kind, id)).then(
          (view) => ({ id, view }),
          (error: unknown) => ({
            id,
            view: error instanceof ApiError && error.status === 404 ? null : undefined,
          }),
        ),
      ),
    ).then((answers) => {
      if (!mounted.current) return;
      setState((previous) => {
        const byId = new Map(answers.map((answer) => [answer.id, answer.view]));
        const rows: EntityView<Kind>[] = [];
        for (const row of previous.rows) {
          const fresh = byId.get(row.id);
          byId.delete(row.id);
          if (fresh === null) continue; // gone from fleetwatch's view
          rows.push(fresh ?? row);
        }
        // A new entity joins at the end; while the pages still come, its page will bring it.
        if (!previous.loading) for (const view of byId.values()) if (view) rows.push(view);
        return { ...previous, rows };
      });
    });
  });

  return { ...state, reload: () => setGeneration((value) => value + 1) };
}

/**
 * Follows the event stream and collects the subjects of entity events per kind; `tick` changes a
 * second after the last event, telling the rows' hooks to fetch what changed.
 */
export function useFleetChanges(): {
  changed: Record<EntityKind, Set<string>>;
  tick: number;
  stream: StreamState;
} {
  const changed = useRef<Record<EntityKind, Set<string>>>({ vehicle: new Set(), robot: new Set() });
  const [tick, setTick] = useState(0);
  const [stream, setStream] = useState<StreamState>('connecting');
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = followEvents(
      {},
      (event) => {
        const subject = parseSubject(event.subject);
        if (!subject) return;
        changed.current[subject.kind].add(subject.id);
        clearTimeout(timer);
        timer = setTimeout(() => setTick((value) => value + 1), LIVE_REFETCH_DELAY_MS);
      },
      setStream,
    );
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, []);
  return { changed: changed.current, tick, stream };
}
