import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DeadLetters } from '../../notifiers/delivery/dead-letters.js';
import { DisabledReceivers } from '../../notifiers/delivery/disabled-receivers.js';
import { ReceiverHolds } from '../../notifiers/delivery/holds.js';
import { readReceiverStates } from '../../notifiers/delivery/receiver-states.js';
import { receiverNameField } from '../../queues/names.js';
import { audit } from '../audit.js';
import { derived, type RouteContext } from '../context.js';
import { notFound } from '../errors.js';
import { parse } from '../validate.js';

/**
 * Receivers, as `fleetwatch receiver` shows and resumes them:
 * - `GET /api/receivers`: each configured receiver with `disabled` (why, since when), `hold`
 *   (until when, why: `cause`, the `status` and `reason` of the answer, the `retryAfterMs` it
 *   asked for and whether `max_hold` `capped` it), `maxHoldMs` and its dead letters.
 * - `POST /api/receivers/{name}/resume` (token): ends the hold now, on every replica; the next
 *   notification, still first in its queue, is sent at once. 200 with `resumed` (the hold ended, or
 *   null when it was not held); 404 for a name the config does not have. Logged as an audit trail
 *   (receiver, the hold it ended, caller address).
 * - `POST /api/receivers/{name}/enable` (token): turns a disabled receiver back on, as
 *   `fleetwatch receiver enable` does (its dead letters stay; replay them). 200 with `enabled` (the
 *   disabling it cleared, or null when it was not disabled); 404 for a name the config does not
 *   have. Audited.
 */

const nameParams = z.object({ name: receiverNameField });

export function registerReceiverRoutes(app: FastifyInstance, context: RouteContext): void {
  const { config, redis } = context.options;
  const prefix = config.redis.prefix;
  const holds = new ReceiverHolds({ redis, prefix });
  const disabledReceivers = new DisabledReceivers({ redis, prefix });
  // The receivers in force (a reload adds and removes them); a replaced view's queues are closed.
  const retired: DeadLetters[] = [];
  const current = derived(
    () => context.live().receivers,
    (configured) => {
      const receivers = configured.map(({ name, kind, max_hold }) => ({ name, kind, max_hold }));
      const names = receivers.map((receiver) => receiver.name);
      const deadLetters = new DeadLetters({
        connection: redis,
        prefix,
        receivers: names,
        logger: context.logger,
      });
      return { receivers, deadLetters };
    },
    (stale) => retired.push(stale.deadLetters),
  );
  const known = (name: string) => current().receivers.some((receiver) => receiver.name === name);
  app.addHook('onClose', async () => {
    await Promise.all([...retired.splice(0), current().deadLetters].map((letters) => letters.close()));
  });

  app.get(
    '/api/receivers',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'Each configured receiver: disabled, held, its dead letters',
          tag: 'Receivers',
          responses: { 200: '`{items}`' },
        },
      },
    },
    async () => {
      const { receivers, deadLetters } = current();
      return { items: await readReceiverStates(receivers, { deadLetters, disabledReceivers, holds }) };
    },
  );

  app.post(
    '/api/receivers/:name/resume',
    {
      config: {
        access: 'write',
        doc: {
          summary: "End a receiver's hold now, on every replica",
          tag: 'Receivers',
          params: nameParams,
          responses: {
            200: '`{receiver, resumed}` (`resumed`: the hold ended, or null)',
            404: 'No such receiver in the config',
          },
        },
      },
    },
    async (request) => {
      const { name } = parse(nameParams, request.params, 'params');
      if (!known(name)) {
        throw notFound(`no receiver "${name}" in the config (GET /api/receivers lists them)`);
      }
      const resumed = await holds.resume(name);
      audit(
        context.logger,
        request,
        {
          receiver: name,
          wasHeldUntil: resumed?.until ?? null,
          cause: resumed?.cause,
          reason: resumed?.reason,
        },
        resumed ? 'receiver resumed through the API' : 'receiver resume through the API: it was not held',
      );
      return { receiver: name, resumed: resumed ?? null };
    },
  );

  app.post(
    '/api/receivers/:name/enable',
    {
      config: {
        access: 'write',
        doc: {
          summary: 'Turn a disabled receiver back on (its dead letters stay: replay them)',
          tag: 'Receivers',
          params: nameParams,
          responses: {
            200: '`{receiver, enabled}` (`enabled`: the disabling it cleared, or null)',
            404: 'No such receiver in the config',
          },
        },
      },
    },
    async (request) => {
      const { name } = parse(nameParams, request.params, 'params');
      if (!known(name)) {
        throw notFound(`no receiver "${name}" in the config (GET /api/receivers lists them)`);
      }
      const cleared = await disabledReceivers.enable(name);
      audit(
        context.logger,
        request,
        { receiver: name, wasDisabledSince: cleared?.at ?? null, reason: cleared?.reason },
        cleared ? 'receiver enabled through the API' : 'receiver enable through the API: it was not disabled',
      );
      return { receiver: name, enabled: cleared ?? null };
    },
  );
}
