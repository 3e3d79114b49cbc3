export {
  type DeadLetter,
  DeadLetterError,
  type DeadLetterProblem,
  DeadLetters,
  type DeadLettersOptions,
  type ReplaySummary,
  receiversWithDeadLetters,
} from './dead-letters.js';
export {
  DELIVERED_MARKER_TTL_SECONDS,
  type DeliveredMarkerStore,
  DeliveredMarkers,
} from './delivered-markers.js';
export {
  createDeliveryQueue,
  type DeliveryJobData,
  type DeliveryProgress,
  type DeliveryQueue,
  deliveryJobId,
  enqueueDelivery,
} from './delivery-queue.js';
export { type DeliveryService, type DeliveryServiceOptions, startDelivery } from './delivery-service.js';
export {
  createDeliveryWorker,
  type DeliveryHook,
  type DeliveryReport,
  type DeliveryResult,
  DeliveryWorker,
  type DeliveryWorkerOptions,
  type DeliveryWorkerTuning,
} from './delivery-worker.js';
export { type DeliveryKeys, deliveryKeys } from './keys.js';
export {
  type DisableRequest,
  type ReceiverDisabled,
  ReceiverSwitch,
  receiverRef,
} from './receiver-switch.js';
export {
  type ExponentialBackoff,
  exponentialPolicy,
  type RetryPolicy,
  type RetryPolicyOverrides,
  retryPolicyFor,
  SLACK_BACKOFF,
  schedulePolicy,
} from './retry-policy.js';
