import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { linkedSignal } from '../../lib/linked-signal.js';
import {
  POWER_POLL_INTERVAL,
  type PowerWaitOutcome,
  waitForPowerState,
} from '../../operations/power-command.js';
import type { PowerTarget } from '../../upstream/schemas/v1.js';
import { audit } from '../audit.js';
import type { RouteContext } from '../context.js';
import { ApiError, conflict, fromUpstream, unavailable } from '../errors.js';
import type { RouteDoc } from '../route-doc.js';
import { parse, pathId, queryDuration, queryFlag, rejectRequest } from '../validate.js';

/**
 * `POST /api/vehicles/{id}/power/{on|off}` (token required): asks the fleet service to switch a
 * vehicle's power, as `fleetwatch power on|off` does.
 *
 * - Without `?wait`: 202 `{ vehicleId, requested, outcome: "accepted" }` once the upstream accepted
 *   the command (the vehicle has not necessarily acted yet).
 * - With `?wait=true` (`&timeout=60s`, at most 10 min; `&interval=2s`; either without `wait` is a
 *   400, as the CLI refuses them without `--wait`): polls the power status
 *   until the vehicle reports the state with nothing pending. 200 `outcome: "completed"` with the
 *   status; 202 `outcome: "timed_out"` when it is still pending at the deadline (the command stands);
 *   409 `power_command_failed` when another command replaced it or it cleared without the state.
 * - The fleet service answering a 2xx other than the spec's 202 still accepted the command: the
 *   answer is as above with a `warning` field saying so (a client must not send it again).
 * - Upstream failures map as in errors.ts: 404 (the vehicle does not exist, is not available to
 *   this client, or is not power-capable: the upstream error says so), 502, 504.
 *
 * Every accepted request is logged (vehicle, target, caller address) as an audit trail.
 */

const params = z.object({
  id: pathId.describe('The vehicle id'),
  target: z.enum(['on', 'off'], { error: 'must be on or off' }).describe('The power state asked for'),
});

const query = z.strictObject({
  wait: queryFlag.optional().describe('Wait until the vehicle reports the state with nothing pending'),
  timeout: queryDuration(1_000, 600_000)
    .optional()
    .describe('How long to wait (default 60s, at most 10m); only with wait'),
  interval: queryDuration(POWER_POLL_INTERVAL.minMs, POWER_POLL_INTERVAL.maxMs)
    .optional()
    .describe('How often the power status is read while waiting (default 2s); only with wait'),
});

/** The answer's shape, for the OpenAPI document. */
const answer = z.looseObject({
  vehicleId: z.string(),
  requested: z.enum(['on', 'off']),
  outcome: z.enum(['accepted', 'completed', 'timed_out']),
  warning: z
    .string()
    .optional()
    .describe('The fleet service answered another 2xx than 202: accepted; do not send again'),
  elapsedMs: z.number().optional(),
  status: z.unknown().optional(),
  lastError: z.string().optional(),
});

const doc: RouteDoc = {
  summary: "Switch a vehicle's power on or off",
  description:
    'As `fleetwatch power on|off`. Without `?wait` the answer comes once the fleet service accepted the command; with `?wait=true` once the vehicle reports the state, or at the time-out (202 `timed_out`: the command stands). Logged as an audit line.',
  tag: 'Vehicle power',
  params,
  query,
  responses: {
    200: { description: 'The vehicle reports the state (`completed`)', schema: answer },
    202: {
      description: 'Accepted (`accepted`), or still pending at the time-out (`timed_out`)',
      schema: answer,
    },
    404: 'The vehicle is not found, not available to this client, or not power-capable',
    409: 'The command failed: another replaced it, or it cleared without the state (`power_command_failed`)',
    502: 'The fleet service failed',
    503: 'fleetwatch is shutting down',
    504: 'The fleet service did not answer in time',
  },
};

function outcomeBody(
  vehicleId: string,
  requested: PowerTarget,
  outcome: PowerWaitOutcome,
  warning: { warning?: string },
) {
  return {
    vehicleId,
    requested,
    outcome: outcome.kind,
    ...warning,
    elapsedMs: outcome.elapsedMs,
    ...('status' in outcome && outcome.status ? { status: outcome.status } : {}),
    ...(outcome.kind === 'timed_out' && outcome.lastError ? { lastError: outcome.lastError.message } : {}),
  };
}

export function registerPowerRoutes(app: FastifyInstance, context: RouteContext): void {
  const fleet = context.options.upstream.fleet;

  app.post(
    '/api/vehicles/:id/power/:target',
    { config: { access: 'write', doc } },
    async (request, reply) => {
      const { id, target } = parse(params, request.params, 'params');
      const options = parse(query, request.query, 'query');
      // Without wait they would be ignored, and the caller who sent them believes the request waits
      // (the CLI refuses --timeout/--interval without --wait alike).
      const needWait = (['timeout', 'interval'] as const).filter((name) => options[name] !== undefined);
      if (!options.wait && needWait.length > 0)
        rejectRequest(
          needWait.map(
            (name) => `query.${name}: only applies with wait=true; add wait=true, or leave it out`,
          ),
        );
      // A client that goes away, or the server closing, ends the request's upstream calls.
      const gone = linkedSignal([context.closing]);
      const onClose = () => {
        if (!reply.sent) gone.abort();
      };
      reply.raw.once('close', onClose);
      const signal = gone.signal;
      try {
        const accepted = await fleet.requestPower(id, target, { signal });
        const warning = accepted.warning === undefined ? {} : { warning: accepted.warning };
        audit(
          context.logger,
          request,
          { vehicleId: id, target, wait: options.wait === true, ...warning },
          'power command requested through the API',
        );
        if (!options.wait)
          return reply.code(202).send({ vehicleId: id, requested: target, outcome: 'accepted', ...warning });

        const outcome = await waitForPowerState(fleet, id, target, {
          timeoutMs: options.timeout ?? 60_000,
          intervalMs: options.interval ?? context.tuning.powerPollMs,
          signal,
        });
        const body = outcomeBody(id, target, outcome, warning);
        switch (outcome.kind) {
          case 'completed':
            return reply.code(200).send(body);
          case 'timed_out':
            return reply.code(202).send(body);
          case 'failed':
            if (outcome.error) throw fromUpstream(outcome.error);
            throw conflict('power_command_failed', `${id}: ${outcome.reason}`, body);
          case 'aborted':
            reply.header('connection', 'close');
            throw unavailable(`stopped waiting for ${id}: fleetwatch is shutting down or the client left`);
        }
      } catch (error) {
        if (context.closing.aborted) reply.header('connection', 'close');
        if (signal.aborted && !(error instanceof ApiError)) {
          throw unavailable(
            `the power ${target} request for ${id} was interrupted: fleetwatch is shutting down`,
          );
        }
        throw error;
      } finally {
        reply.raw.off('close', onClose);
        gone.release();
      }
    },
  );
}
