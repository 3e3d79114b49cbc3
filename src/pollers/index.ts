export { defineEntityPoller, type EntityPollerDefinition, type EntityTarget } from './entity-poller.js';
export {
  emptyPipelineResult,
  type ObservationInput,
  ObservationPipeline,
  type ObservationPipelineOptions,
  type PipelineResult,
  type PipelineSpec,
} from './observation-pipeline.js';
export { mapLimit, mapObservation, observe, toObservationError } from './observe.js';
export * from './outcome.js';
export { createPollWorker, type PollWorker, type PollWorkerOptions } from './poll-worker.js';
export type { PollContext, Poller, PollUpstream } from './poller.js';
export { POLLERS } from './registry.js';
export { PollRunner, type PollRunnerOptions, type RunJobOptions, shard, targetsOf } from './runner.js';
export { PollScheduler, type PollSchedulerOptions, type ScheduledPoller } from './scheduler.js';
export {
  countExchange,
  UpstreamWindows,
  type UpstreamWindowsOptions,
  upstreamRef,
} from './upstream-windows.js';
