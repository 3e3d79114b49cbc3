import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';
import { errorBody } from '../errors.js';
import { ReadinessCheck } from '../readiness.js';

/**
 * Open endpoints for scrapers and orchestrators (no token, ever):
 * - `GET /metrics`: the Prometheus exposition (404 when this process has no metrics registry);
 * - `GET /healthz`: liveness — the process answers;
 * - `GET /readyz`: readiness — Redis answers PING and an upstream token can be had; 503 names the
 *   failing check. Cached for ~5 s (see readiness.ts).
 */
export function registerProbeRoutes(app: FastifyInstance, context: RouteContext): void {
  const readiness = new ReadinessCheck({
    redis: context.options.redis,
    tokens: context.options.upstream.tokens,
    cacheMs: context.tuning.readyCacheMs,
    timeoutMs: context.tuning.readyTimeoutMs,
  });

  app.get('/healthz', { config: { access: 'open' } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { access: 'open' } }, async (_request, reply) => {
    const result = await readiness.check();
    if (result.ready) return { status: 'ready', checks: result.checks, checkedAt: result.checkedAt };
    const failed = Object.entries(result.checks)
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => `${name}: ${check.error ?? 'failed'}`);
    return reply.code(503).send({
      status: 'not_ready',
      ...errorBody('not_ready', `not ready: ${failed.join('; ')}`),
      checks: result.checks,
      checkedAt: result.checkedAt,
    });
  });

  app.get('/metrics', { config: { access: 'open' } }, async (_request, reply) => {
    const metrics = context.options.metrics;
    if (!metrics) {
      return reply
        .code(404)
        .send(errorBody('not_found', 'this fleetwatch process exports no metrics (no registry was given)'));
    }
    const text = await metrics.text();
    return reply.type(metrics.contentType).send(text);
  });
}
