export {
  DROPPED_DEFAULT_METRICS,
  METRIC_DEFINITIONS,
  METRIC_NAMES,
  METRIC_PREFIX,
  METRICS,
  type MetricDefinition,
  type MetricType,
  seriesNames,
} from './catalogue.js';
export { CountingSnapshotStore } from './counting-store.js';
export {
  createMetrics,
  type Metrics,
  type MetricsHooks,
  type MetricsOptions,
  type MetricsSources,
} from './metrics.js';
export { withNotificationHooks } from './notification-metrics.js';
export type { PollTiming } from './poll-metrics.js';
export type { QueueSource } from './queue-gauges.js';
