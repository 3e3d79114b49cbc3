/*
 * The console's routes without the DOM: what a hash names and which filters a page shows. Plain
 * TypeScript, so the unit tests import it (the hooks over it are in router.ts).
 */

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
