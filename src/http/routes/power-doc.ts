import { z } from 'zod';
import { POWER_POLL_INTERVAL } from '../../operations/power-command.js';
import type { RouteDoc } from '../route-doc.js';
import { pathId, queryDuration, queryFlag } from '../validate.js';

/**
 * The OpenAPI entry of `POST /api/vehicles/{id}/power/{target}` (routes/power.ts), which does not
 * carry its own doc yet: the schemas below repeat the ones power.ts parses with, and move into its
 * `config.doc` once it does.
 */

const params = z.object({
  id: pathId.describe('The vehicle id'),
  target: z.enum(['on', 'off'], { error: 'must be on or off' }).describe('The power state asked for'),
});

const query = z.strictObject({
  wait: queryFlag.optional().describe('Wait until the vehicle reports the state with nothing pending'),
  timeout: queryDuration(1_000, 600_000).optional().describe('How long to wait (default 60s, at most 10m)'),
  interval: queryDuration(POWER_POLL_INTERVAL.minMs, POWER_POLL_INTERVAL.maxMs)
    .optional()
    .describe('How often the power status is read while waiting (default 2s)'),
});

const outcome = z.looseObject({
  vehicleId: z.string(),
  requested: z.enum(['on', 'off']),
  outcome: z.enum(['accepted', 'completed', 'timed_out']),
  elapsedMs: z.number().optional(),
  status: z.unknown().optional(),
  lastError: z.string().optional(),
});

export const POWER_ROUTE_DOC: RouteDoc = {
  summary: "Switch a vehicle's power on or off",
  description:
    'As `fleetwatch power on|off`. Without `?wait` the answer comes once the fleet service accepted the command; with `?wait=true` once the vehicle reports the state, or at the time-out (202 `timed_out`: the command stands). Logged as an audit line.',
  tag: 'Vehicle power',
  params,
  query,
  responses: {
    200: { description: 'The vehicle reports the state (`completed`)', schema: outcome },
    202: {
      description: 'Accepted (`accepted`), or still pending at the time-out (`timed_out`)',
      schema: outcome,
    },
    404: 'No such vehicle, or one without power control',
    409: 'The command failed: another replaced it, or it cleared without the state (`power_command_failed`)',
    502: 'The fleet service failed',
    503: 'fleetwatch is shutting down',
    504: 'The fleet service did not answer in time',
  },
};
