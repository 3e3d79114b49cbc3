import { useEffect, useState } from 'preact/hooks';
import { currentFilters, type HeldFilters, parseRoute, type Route } from './route.js';

export { href, parseRoute, type Route } from './route.js';

/** The route of the page's hash, following each change of it. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** A page's filters, read from the route's query (`read`) and then changed on the page. */
export function useQueryFilters<T extends object>(
  query: URLSearchParams,
  read: (query: URLSearchParams) => T,
): [T, (change: Partial<T>) => void] {
  const [held, setHeld] = useState<HeldFilters<T>>(() => ({ query, values: read(query) }));
  const change = (update: Partial<T>) =>
    setHeld((previous) => ({ query, values: { ...currentFilters(previous, query, read), ...update } }));
  return [currentFilters(held, query, read), change];
}
