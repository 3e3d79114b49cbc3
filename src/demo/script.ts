import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator, VehicleView } from '../simulator/index.js';
import type { FleetClient } from '../upstream/index.js';

/**
 * The scripted part of the demo, run once the daemon has seen the fleet: a vehicle is asked to
 * power on through the upstream API (as `fleetwatch power on` would), a robot stops answering its
 * health checks, a vehicle drops off the VPN; then both come back. Each step is announced on the
 * console first, so the notifications that follow read as its consequences.
 */

export interface DemoCast {
  /** Off, power-capable, on the VPN: it will be powered on. */
  powerOn: string;
  /** On the VPN: it will drop off and come back. */
  vpnFlap: string;
  /** Healthy: it will go down and come back. */
  unhealthy: string;
}

function usable(vehicle: VehicleView): boolean {
  return vehicle.powerCapable && !vehicle.stuck && vehicle.vpnConnected && vehicle.pendingCommand === null;
}

/**
 * Picks the vehicles and the robot of the script, and prepares the fleet before fleetwatch sees it
 * (a vehicle switched off if none is, so the power-on is a change). Needs 2 vehicles and 1 robot.
 */
export function castDemo(simulator: Simulator): DemoCast {
  const { control } = simulator;
  const state = control.state();
  const vehicles = state.vehicles.filter(usable);
  const off = vehicles.find((vehicle) => vehicle.state === 'off') ?? vehicles[0];
  if (!off) throw new Error('the demo fleet has no power-capable vehicle on the VPN');
  if (off.state !== 'off')
    control.updateVehicle(off.id, { state: 'off', updatedAt: new Date().toISOString() });
  const flap = vehicles.find((vehicle) => vehicle.id !== off.id);
  const robot = state.robots.find((candidate) => candidate.healthy) ?? state.robots[0];
  if (!flap || !robot) throw new Error('the demo needs at least 2 vehicles and 1 robot');
  if (!robot.healthy) control.updateRobot(robot.deviceId, { healthy: true });
  return { powerOn: off.id, vpnFlap: flap.id, unhealthy: robot.deviceId };
}

export interface DemoScriptOptions {
  simulator: Simulator;
  fleet: Pick<FleetClient, 'requestPowerOn'>;
  cast: DemoCast;
  /** Prints one narration line. */
  say: (line: string) => void;
  signal: AbortSignal;
  /** Scales every pause (tests); 1 by default. */
  pace?: number;
}

/** Runs the script; resolves when it is done or `signal` aborts (never rejects on abort). */
export async function runDemoScript(options: DemoScriptOptions): Promise<void> {
  const { simulator, fleet, cast, say, signal } = options;
  const { control } = simulator;
  const pace = options.pace ?? 1;
  const pause = (ms: number) => delay(ms * pace, undefined, { signal });
  try {
    await pause(500);
    say(`▶ asking ${cast.powerOn} to power on (POST /v1/vehicles/${cast.powerOn}/power/on)`);
    try {
      await fleet.requestPowerOn(cast.powerOn, { signal });
    } catch (error) {
      if (signal.aborted) return;
      say(`▶ the power-on request failed: ${(error as Error).message}`);
    }
    await pause(2_500);
    say(`▶ robot ${cast.unhealthy} stops answering its health checks`);
    control.updateRobot(cast.unhealthy, { healthy: false, unhealthyMode: 'error' });
    await pause(2_500);
    say(`▶ ${cast.vpnFlap} drops off the VPN`);
    control.updateVehicle(cast.vpnFlap, { vpnConnected: false });
    await pause(7_000);
    say(`▶ ${cast.vpnFlap} reconnects`);
    control.updateVehicle(cast.vpnFlap, { vpnConnected: true });
    await pause(3_000);
    say(`▶ robot ${cast.unhealthy} recovers`);
    control.updateRobot(cast.unhealthy, { healthy: true });
    await pause(3_000);
    say('▶ end of the scripted part: the simulated fleet keeps changing by itself. Ctrl-C stops the demo.');
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}
