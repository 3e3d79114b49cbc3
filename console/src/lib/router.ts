import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/incidents`, `#/fleet`, `#/vehicle/veh-0001`, ...): the server serves one page,
 * links from Slack and Grafana point at `<console.url>/#/...`, and the browser's back button works.
 */

export interface Route {
  /** The first path segment: `incidents`, `fleet`, `vehicle`, `robot`, `events`, ... */
  page: string;
  /** The rest, decoded: an entity id, an incident id. */
  params: string[];
  query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = text.split('?');
  const [page = '', ...params] = path.split('/').filter((part) => part !== '');
  return {
    page: page || 'incidents',
    params: params.map((part) => decodeURIComponent(part)),
    query: new URLSearchParams(search),
  };
}

export function href(page: string, ...params: string[]): string {
  return `#/${[page, ...params.map((part) => encodeURIComponent(part))].join('/')}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** A page's filters as the viewer last set them, with the query they started from. */
export interface HeldFilters<T> {
  query: URLSearchParams;
  values: T;
}

/**
 * The filters a page shows: the viewer's own while the URL stays; the URL's again once it changes
 * (a link followed, or the hash set, while the page is open). Each hash change parses a new query
 * (`useRoute`), so a link back to an earlier URL applies it again too.
 */
export function currentFilters<T>(
  held: HeldFilters<T>,
  query: URLSearchParams,
  read: (query: URLSearchParams) => T,
): T {
  return held.query === query ? held.values : read(query);
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
