export { type DeliveryKeys, deliveryKeys } from '../../store/keys.js';
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
export {
  type DeliveryService,
  type DeliveryServiceOptions,
  deliveryState,
  startDelivery,
} from './delivery-service.js';
export {
  createDeliveryWorker,
  type DeliveryHook,
  type DeliveryReport,
  type DeliveryResult,
  DeliveryWorker,
  type DeliveryWorkerOptions,
  type DeliveryWorkerTuning,
} from './delivery-worker.js';
export {
  DisabledReceivers,
  type DisableRequest,
  type ReceiverDisabled,
  receiverRef,
} from './disabled-receivers.js';
export {
  HOLD_CAUSES,
  type HoldCause,
  type HoldRequest,
  type ReceiverHold,
  ReceiverHolds,
} from './holds.js';
