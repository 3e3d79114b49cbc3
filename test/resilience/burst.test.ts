import { describe, it } from 'vitest';
import { vehicleSubject } from '../support/scenario.js';
import { conclude, expectNothingLost } from './conclude.js';
import { stackPerFile } from './stack.js';

/**
 * Thousands of changes at once: a fleet of thousands of vehicles appears in one list, then every
 * one of them drops off the VPN in the same cycle, then every one comes back. Each burst is one
 * poll's worth of changes; every event must be logged once and reach the receiver once (grouped
 * by type, so a burst arrives as a few large batches).
 */

const VEHICLES = Math.max(1, Number(process.env.RESILIENCE_BURST ?? 2_000));

describe('resilience: a burst of thousands of changes', () => {
  const stacks = stackPerFile();

  it('log and deliver every one of them once', async (context) => {
    const current = await stacks.open(context, {
      seedOffset: 5,
      // Power is polled too (it is part of every vehicle's baseline), in few large jobs.
      daemon: { pollers: { power: { interval: '2s', batch_size: 250 } } },
    });
    const timings: string[] = [];
    const timed = async (label: string, step: () => Promise<unknown>) => {
      const from = Date.now();
      await step();
      timings.push(`${label}: logged in ${((Date.now() - from) / 1000).toFixed(1)} s`);
    };

    let ids: string[] = [];
    await timed(`${VEHICLES} vehicles discovered`, async () => {
      ids = (await current.learnFleet({ vehicles: VEHICLES, robots: 0 }, 2, 120_000)).vehicles;
    });
    const { control } = current.sim;
    const flipAll = (vpnConnected: boolean) => () => {
      for (const id of ids) control.updateVehicle(id, { vpnConnected });
    };
    const every = (type: string) => ids.map((id) => ({ type, subject: vehicleSubject(id) }));
    await timed(`${VEHICLES} VPN drops`, () =>
      current.scenario.step(
        'every vehicle drops off the VPN',
        flipAll(false),
        every('vehicle.vpn.disconnected'),
        {
          timeoutMs: 120_000,
        },
      ),
    );
    await timed(`${VEHICLES} VPN reconnections`, () =>
      current.scenario.step('every vehicle reconnects', flipAll(true), every('vehicle.vpn.connected'), {
        timeoutMs: 120_000,
      }),
    );

    const conclusion = await conclude(current, {
      order: 5,
      scenario: 'burst',
      description:
        `2 replicas; ${VEHICLES} vehicles appear in one vehicle list, then all of them drop off the VPN ` +
        'in the same cycle, then all reconnect: three bursts of one poll each.',
      faults: `3 bursts of ${VEHICLES} changes in one cycle`,
      changes: 3 * VEHICLES,
      timeoutMs: 120_000,
      notes: timings,
    });
    expectNothingLost(conclusion);
  });
});
