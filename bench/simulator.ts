import { join } from 'node:path';
import { request } from 'undici';
import { BenchProcess } from './child.js';

/**
 * The simulated fleet service in a process of its own (so its CPU is not fleetwatch's), and the
 * parts of its control API the benchmark uses: flipping states, reading request counters.
 */

export const CLIENT_ID = 'fleetwatch-bench';
export const CLIENT_SECRET = 'bench-secret';

export interface FleetSize {
  vehicles: number;
  robots: number;
}

export class SimulatorProcess {
  readonly url: string;
  readonly process: BenchProcess;

  private constructor(url: string, process: BenchProcess) {
    this.url = url;
    this.process = process;
  }

  static async start(root: string, size: FleetSize, logDir: string): Promise<SimulatorProcess> {
    const child = new BenchProcess(
      'simulator',
      process.execPath,
      [
        join(root, 'bin/fleetwatch.js'),
        'simulate',
        '--port',
        '0',
        '--vehicles',
        String(size.vehicles),
        '--robots',
        String(size.robots),
        '--no-behaviours',
        '--seed',
        '7',
        '--client-id',
        CLIENT_ID,
        '--client-secret',
        CLIENT_SECRET,
      ],
      { logFile: join(logDir, 'simulator.log') },
    );
    const url = await child.firstLine();
    if (!/^http:\/\//.test(url)) throw new Error(`the simulator printed ${JSON.stringify(url)}, not its URL`);
    return new SimulatorProcess(url, child);
  }

  async #call<T>(method: 'GET' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const res = await request(`${this.url}/_sim/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300)
      throw new Error(`simulator ${method} /_sim/${path}: ${res.statusCode} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Sets the upstream's faults (the simulator's `PUT /_sim/faults`), or lifts them (undefined). */
  async setFaults(faults: Record<string, unknown> | undefined): Promise<void> {
    if (faults === undefined) await this.#call('DELETE', 'faults');
    else await this.#call('PUT', 'faults', faults);
  }

  /** Requests served so far, all operations and statuses together (the token included). */
  async requestsServed(): Promise<number> {
    const stats = await this.#call<{ requests: Record<string, Record<string, number>> }>('GET', 'stats');
    let total = 0;
    for (const byStatus of Object.values(stats.requests)) {
      for (const count of Object.values(byStatus)) total += count;
    }
    return total;
  }

  /** Turns a vehicle's reported power state over; resolves with the new state. */
  async flipVehiclePower(id: string): Promise<'on' | 'off'> {
    const vehicle = await this.#call<{ state: string }>('GET', `vehicles/${encodeURIComponent(id)}`);
    const state = vehicle.state === 'on' ? 'off' : 'on';
    await this.#call('PATCH', `vehicles/${encodeURIComponent(id)}`, {
      state,
      updatedAt: new Date().toISOString(),
    });
    return state;
  }

  /** Moves a robot's autonomy (`cortex_status`) to another value. */
  async flipRobotAutonomy(deviceId: string): Promise<number> {
    const robot = await this.#call<{ feedback: { cortexStatus: number } }>(
      'GET',
      `robots/${encodeURIComponent(deviceId)}`,
    );
    const cortexStatus = (robot.feedback.cortexStatus + 1) % 5;
    await this.#call('PATCH', `robots/${encodeURIComponent(deviceId)}`, { feedback: { cortexStatus } });
    return cortexStatus;
  }

  /** Whether the vehicle answers power requests (the seeded fleet has some that do not). */
  async powerCapable(id: string): Promise<boolean> {
    const vehicle = await this.#call<{ powerCapable: boolean }>('GET', `vehicles/${encodeURIComponent(id)}`);
    return vehicle.powerCapable;
  }

  stop(): Promise<void> {
    return this.process.stop();
  }
}
