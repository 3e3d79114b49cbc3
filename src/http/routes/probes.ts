import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { RedisHealth } from '../../lib/redis-health.js';
import { storeKeys } from '../../store/keys.js';
import type { RouteContext } from '../context.js';
import { errorBody } from '../errors.js';
import { ReadinessCheck } from '../readiness.js';

/**
 * Open endpoints for scrapers and orchestrators (no token, ever), each answering within a second
 * whatever Redis does:
 * - `GET /metrics`: the Prometheus exposition (404 when this process has no metrics registry);
 *   scrape-time reads of Redis wait at most 500 ms, then show their last reading;
 * - `GET /healthz`: liveness — the process answers;
 * - `GET /readyz`: readiness — Redis takes a write and an upstream token can be had; every check is
 *   named with its state, and a 503 names the failing ones (see readiness.ts).
 */
export function registerProbeRoutes(app: FastifyInstance, context: RouteContext): void {
  const { options, tuning } = context;
  // Without the daemon's health check, one of this server's own, made on the first probe.
  let own: RedisHealth | undefined;
  const health = (): RedisHealth => {
    if (options.redisHealth) return options.redisHealth;
    own ??= new RedisHealth({
      redis: options.redis,
      key: storeKeys(options.config.redis.prefix).healthCheck,
      budgetMs: tuning.readyTimeoutMs,
      cacheMs: tuning.readyCacheMs,
    });
    return own;
  };
  app.addHook('onClose', async () => {
    await own?.stop();
  });
  const readiness = new ReadinessCheck({
    redis: { check: () => health().check() },
    tokens: options.upstream.tokens,
    cacheMs: tuning.readyCacheMs,
    budgetMs: tuning.readyTimeoutMs,
  });

  app.get(
    '/healthz',
    {
      config: {
        access: 'open',
        doc: {
          summary: 'Liveness: the process answers',
          tag: 'Probes',
          responses: {
            200: { description: '`{"status": "ok"}`', schema: z.object({ status: z.literal('ok') }) },
          },
        },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: {
        access: 'open',
        doc: {
          summary: 'Readiness: Redis takes a write and an upstream token can be had',
          description: 'Every check is named with its state; each answers within its budget.',
          tag: 'Probes',
          responses: {
            200: 'Ready: `{status: "ready", checks, checkedAt}`',
            503: 'Not ready: the failing checks named in `error.message`, with `checks`',
          },
        },
      },
    },
    async (_request, reply) => {
      const result = await readiness.check();
      if (result.ready) return { status: 'ready', checks: result.checks, checkedAt: result.checkedAt };
      const failed = Object.entries(result.checks)
        .filter(([, check]) => !check.ok)
        .map(([name, check]) => `${name}: ${check.error ?? check.state}`);
      return reply.code(503).send({
        status: 'not_ready',
        ...errorBody('not_ready', `not ready: ${failed.join('; ')}`),
        checks: result.checks,
        checkedAt: result.checkedAt,
      });
    },
  );

  app.get(
    '/metrics',
    {
      config: {
        access: 'open',
        doc: {
          summary: 'Prometheus metrics',
          tag: 'Probes',
          responses: {
            200: { description: 'The Prometheus text exposition', type: 'text/plain' },
            404: 'This process exports no metrics',
          },
        },
      },
    },
    async (_request, reply) => {
      const metrics = context.options.metrics;
      if (!metrics) {
        return reply
          .code(404)
          .send(errorBody('not_found', 'this fleetwatch process exports no metrics (no registry was given)'));
      }
      const text = await metrics.text();
      return reply.type(metrics.contentType).send(text);
    },
  );
}
