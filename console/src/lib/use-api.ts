import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/**
 * Loads something from the API for a page: the value, the error (as the API said it), whether a
 * load is under way, and `reload` (for a page that hears a change on the event stream). A newer
 * load wins over an older one still under way.
 */
export interface Loaded<T> {
  value: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ value: T | undefined; error: ApiError | undefined; loading: boolean }>(
    {
      value: undefined,
      error: undefined,
      loading: true,
    },
  );
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    const controller = new AbortController();
    setState((previous) => ({ ...previous, loading: true }));
    load(controller.signal).then(
      (value) => {
        if (mine === generation.current) setState({ value, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (mine !== generation.current || controller.signal.aborted) return;
        const apiError =
          error instanceof ApiError
            ? error
            : new ApiError(0, 'network', String((error as Error).message ?? error));
        setState((previous) => ({ ...previous, error: apiError, loading: false }));
      },
    );
    return () => controller.abort();
    // The caller names what the load depends on (`deps`), as with useEffect.
  }, deps);
  useEffect(() => run(), [run]);
  return { ...state, reload: run };
}
