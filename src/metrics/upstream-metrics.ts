import type { Counter, Histogram } from 'prom-client';
import type { RequestInfo, RequestObserver } from '../upstream/http.js';

/**
 * The upstream client's request observer: every HTTP exchange (each try of a retried call) by
 * operation and status — the HTTP status code, or `timeout` / `network` when none came back.
 *
 * The label objects are made once per operation and status, not per request: this runs for every
 * request the poll thread reports (thousands a second at 40,000 entities), and the per-request
 * ones were over a third of what reached the daemon thread's old generation (BENCHMARKS.md).
 */
export function createUpstreamObserver(options: {
  requests: Counter<'operation' | 'status'>;
  duration: Histogram<'operation'>;
}): RequestObserver {
  const byOperation = new Map<string, { labels: { operation: string }; byStatus: Map<string, Labels> }>();
  return {
    request(info: RequestInfo) {
      let known = byOperation.get(info.operation);
      if (!known) {
        known = { labels: { operation: info.operation }, byStatus: new Map() };
        byOperation.set(info.operation, known);
      }
      // Numbers' strings come from V8's number-string cache; at most 500 statuses per operation.
      const status = String(info.status);
      let labels = known.byStatus.get(status);
      if (!labels) {
        labels = { operation: info.operation, status };
        known.byStatus.set(status, labels);
      }
      options.requests.inc(labels);
      options.duration.observe(known.labels, Math.max(0, info.durationMs) / 1000);
    },
  };
}

type Labels = { operation: string; status: string };
