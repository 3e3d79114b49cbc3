import type { Counter, Histogram } from 'prom-client';
import type { RequestInfo, RequestObserver } from '../upstream/http.js';

/**
 * The upstream client's request observer: every HTTP exchange (each try of a retried call) by
 * operation and status — the HTTP status code, or `timeout` / `network` when none came back.
 */
export function createUpstreamObserver(options: {
  requests: Counter<'operation' | 'status'>;
  duration: Histogram<'operation'>;
}): RequestObserver {
  return {
    request(info: RequestInfo) {
      options.requests.inc({ operation: info.operation, status: String(info.status) });
      options.duration.observe({ operation: info.operation }, Math.max(0, info.durationMs) / 1000);
    },
  };
}
