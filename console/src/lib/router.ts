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
