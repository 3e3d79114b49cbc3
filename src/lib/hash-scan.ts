import type { RedisClient } from './redis-connection.js';

/** Fields read per `HSCAN` step unless told otherwise. */
export const HASH_SCAN_COUNT = 500;

/**
 * A Redis hash a page of `[field, value]` pairs at a time (`HSCAN`), `MATCH` optional: a large
 * hash read with one `HGETALL` holds Redis while it answers. A field present for the whole scan
 * comes at least once (possibly twice); one written or deleted during it may or may not.
 */
export async function* hashPages(
  redis: RedisClient,
  key: string,
  options: { match?: string; count?: number } = {},
): AsyncGenerator<Array<[field: string, value: string]>> {
  const count = options.count ?? HASH_SCAN_COUNT;
  let cursor = '0';
  do {
    const [next, flat] =
      options.match === undefined
        ? await redis.hscan(key, cursor, 'COUNT', count)
        : await redis.hscan(key, cursor, 'MATCH', options.match, 'COUNT', count);
    cursor = next;
    const page: Array<[string, string]> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) page.push([flat[i] as string, flat[i + 1] as string]);
    if (page.length > 0) yield page;
  } while (cursor !== '0');
}
