export {
  COMMAND_STATUSES,
  type CommandStatus,
  FACETS,
  HEALTH_STATUSES,
  type HealthStatus,
  POWER_LABELS,
  type PowerLabel,
  VPN_STATUSES,
  type VpnStatus,
} from './facets.js';
export {
  type EntityGauges,
  type EntityView,
  type ErrorView,
  type FacetSnapshot,
  type FleetReading,
  FleetReadModel,
  type FleetReadModelOptions,
  type FleetStore,
  type ListInfo,
  type MembershipReading,
  type Presence,
  type RejectedView,
  type RobotView,
  readMembership,
  type VehicleView,
} from './read-model.js';
export { readThreshold, stateV1 } from './states.js';
