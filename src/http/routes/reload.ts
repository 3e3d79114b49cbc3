import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { audit } from '../audit.js';
import type { RouteContext } from '../context.js';
import { ApiError, conflict, errorBody } from '../errors.js';

/**
 * `POST /-/reload` (role `admin`), as Prometheus and Alertmanager have it: the daemon reads its
 * config file again, validates it fully and applies what can change live (daemon/reload.ts), the
 * same as SIGHUP. Answers:
 * - 200 `{status: "reloaded" | "unchanged", changed, receivers: {added, removed, changed},
 *   needsRestart}`: in force now; `needsRestart` names settings that changed in the file but keep
 *   their value until a restart;
 * - 422 `invalid_config`: the file cannot be used (unreadable, not YAML, schema), with
 *   `details.problems` as `fleetwatch config check` prints them; the config in force is kept;
 * - 500 `reload_failed`: the new config could not be applied (the log says which part);
 * - 409 `reload_unavailable`: this process was not started from a config file (`fleetwatch run`).
 * Only a bearer token or a session: a browser resends cached Basic credentials (the queue UI's
 * login) with any page's form, so they do not reload. Audited.
 */

const changesSchema = z.object({
  status: z.enum(['reloaded', 'unchanged']),
  changed: z.array(z.string()),
  receivers: z.object({
    added: z.array(z.string()),
    removed: z.array(z.string()),
    changed: z.array(z.string()),
  }),
  needsRestart: z.array(z.string()),
});

export function registerReloadRoute(app: FastifyInstance, context: RouteContext): void {
  app.post(
    '/-/reload',
    {
      config: {
        access: 'admin',
        doc: {
          summary: 'Re-read the config file and apply what changed, without a restart (as SIGHUP)',
          description:
            'Routes, receivers, maintenance windows, inhibition rules, entity tags, detector thresholds and `console.url` change live. Other settings (Redis, HTTP listener, pollers, worker, ...) need a restart: they are listed in `needsRestart` and keep their value. An invalid file changes nothing.',
          tag: 'Admin',
          responses: {
            200: { description: 'Applied: what changed, and what needs a restart', schema: changesSchema },
            409: 'This process was not started from a config file',
            422: 'The file is invalid: `details.problems`, one line each; the config in force is kept',
            500: 'The config could not be applied: `details.problems` names the part',
          },
        },
      },
    },
    async (request, reply) => {
      if (request.authVia === 'basic') {
        throw new ApiError(
          401,
          'unauthorized',
          'send the token as Authorization: Bearer <token>; Basic credentials are for the queue UI only',
        );
      }
      const reload = context.options.reload;
      if (!reload) {
        throw conflict(
          'reload_unavailable',
          'this process was not started from a config file; it cannot reload',
        );
      }
      const result = await reload();
      if (!result.ok) {
        audit(
          context.logger,
          request,
          { problems: result.problems.length },
          'config reload refused through the API',
        );
        const status = result.reason === 'invalid' ? 422 : 500;
        const code = result.reason === 'invalid' ? 'invalid_config' : 'reload_failed';
        const first = result.problems[0] ?? 'the config could not be applied';
        const more = result.problems.length > 1 ? ` (and ${result.problems.length - 1} more)` : '';
        const what =
          result.reason === 'invalid'
            ? 'reload refused, the config in force is kept'
            : 'the config could not be applied';
        return reply
          .code(status)
          .send(errorBody(code, `${what}: ${first}${more}`, { problems: result.problems }));
      }
      audit(
        context.logger,
        request,
        { status: result.status, changed: result.changed, needsRestart: result.needsRestart },
        'config reloaded through the API',
      );
      const { status, changed, receivers, needsRestart } = result;
      return { status, changed, receivers, needsRestart };
    },
  );
}
