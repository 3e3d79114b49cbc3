/**
 * The paths the server has routes for, by method, so that a request for a known path with another
 * method is answered 405 with `Allow` (RFC 9110 §15.5.6) rather than 404. Fed by fastify's
 * `onRoute` hook; patterns are fastify's own: `:name` is one path segment, `*` the rest.
 */
export class RouteTable {
  readonly #routes: Array<{ method: string; pattern: RegExp }> = [];

  add(methods: string | readonly string[], url: string): void {
    const pattern = new RegExp(`^${toSource(url)}/?$`);
    for (const method of typeof methods === 'string' ? [methods] : methods) {
      this.#routes.push({ method: method.toUpperCase(), pattern });
    }
  }

  /** The methods some route answers for `path` (no query string), in a stable order. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.#routes) if (route.pattern.test(path)) methods.add(route.method);
    return [...methods].sort();
  }
}

function toSource(url: string): string {
  const trimmed = url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
  return trimmed
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/:[A-Za-z0-9_]+/g, '[^/]+')
    .replace(/\*/g, '.*');
}
