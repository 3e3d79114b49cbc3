export { DEFAULT_BEHAVIOURS } from './behaviours.js';
export { SimControlError } from './control.js';
export { CONTROL_FROM_LIMIT, ControlAccess, parseControlFrom } from './control-access.js';
export { SEED_LIMITS } from './seed.js';
export { startSimulator } from './server.js';
export type {
  BehaviourOptions,
  CommandState,
  ContractViolation,
  FaultOptions,
  FaultScope,
  PowerState,
  RobotFeedbackView,
  RobotInput,
  RobotPatch,
  RobotView,
  SimClient,
  SimState,
  SimStats,
  Simulator,
  SimulatorControl,
  SimulatorOptions,
  VehicleInput,
  VehiclePatch,
  VehicleView,
} from './types.js';
