import type { FastifyInstance } from 'fastify';
import { compileMaintenance, nextOccurrence, openOccurrence } from '../../notifiers/muting/maintenance.js';
import { derived, type RouteContext } from '../context.js';

/**
 * Maintenance windows, as the config in force defines them (`notifications.maintenance`;
 * read-only: a window is changed in the config file, and follows a reload):
 * - `GET /api/maintenance`: each window with its schedule, time zone, duration and `match`, the
 *   occurrence open now (`active`, or null) and the next one to open (`next`, within 400 days, or null).
 */

const iso = (ms: number) => new Date(ms).toISOString();

export function registerMaintenanceRoutes(app: FastifyInstance, context: RouteContext): void {
  const view = derived(
    () => context.live().notifications.maintenance,
    (configured) => ({ configured, windows: compileMaintenance(configured) }),
  );

  app.get(
    '/api/maintenance',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'The configured maintenance windows: open now, and the next to open',
          description:
            '`active` is the occurrence open now (`startsAt`, `endsAt`) or null; `next` the next one to open within 400 days, or null.',
          tag: 'Silences',
          responses: {
            200: '`{items}`: `name`, `schedule`, `timeZone`, `durationMs`, `match`, `active`, `next`',
          },
        },
      },
    },
    async () => {
      const now = Date.now();
      const { configured, windows } = view();
      return {
        items: windows.map((window, index) => {
          const active = openOccurrence(window, now);
          const next = nextOccurrence(window, now);
          return {
            name: window.name,
            schedule: window.schedule.expression,
            timeZone: window.timeZone,
            durationMs: window.durationMs,
            match: configured[index]?.match ?? null,
            active: active ? { startsAt: iso(active.startsAt), endsAt: iso(active.endsAt) } : null,
            next: next ? { startsAt: iso(next.startsAt), endsAt: iso(next.endsAt) } : null,
          };
        }),
      };
    },
  );
}
