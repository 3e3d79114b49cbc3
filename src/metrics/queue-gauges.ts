import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Counter, Gauge } from 'prom-client';
import { throttledWarn } from '../queues/connection.js';
import { CachedLoader } from './cache.js';

/**
 * `fleetwatch_queue_jobs{queue,state}` and `fleetwatch_dead_letters{receiver}`, read at scrape
 * time with one `getJobCounts` per queue (a handful of Redis commands each, whatever the queue
 * length), cached like the fleet reading. A receiver's dead letters are the failed jobs of its
 * `notify-<receiver>` queue. When a read fails the gauges keep their last values and
 * `fleetwatch_metrics_collect_errors_total{source="queues"}` counts it.
 */

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export interface QueueSource {
  /** The BullMQ queue name: `poll`, `events`, `notify-<receiver>`. */
  name: string;
  queue: Pick<Queue, 'getJobCounts'>;
  /** Set on a receiver's delivery queue: its failed jobs are that receiver's dead letters. */
  receiver?: string;
}

interface QueueReading {
  counts: Array<{ source: QueueSource; counts: Record<QueueState, number> }>;
}

export interface QueueGaugesOptions {
  jobs: Gauge<'queue' | 'state'>;
  deadLetters: Gauge<'receiver'>;
  errors: Counter<'source'>;
  cacheMs: number;
  logger?: Logger;
}

async function countsOf(source: QueueSource): Promise<Record<QueueState, number>> {
  const raw = await source.queue.getJobCounts(
    'waiting',
    'prioritized',
    'active',
    'delayed',
    'failed',
    'completed',
  );
  const n = (key: string) => (typeof raw[key] === 'number' && Number.isFinite(raw[key]) ? raw[key] : 0);
  return {
    // Prioritized jobs wait too (BullMQ keeps them in a set of their own).
    waiting: n('waiting') + n('prioritized'),
    active: n('active'),
    delayed: n('delayed'),
    failed: n('failed'),
    completed: n('completed'),
  };
}

export class QueueGauges {
  readonly #options: QueueGaugesOptions;
  readonly #warn: ReturnType<typeof throttledWarn>;
  #loader: CachedLoader<QueueReading> | undefined;
  #last: QueueReading | undefined;
  #applied: QueueReading | undefined;

  constructor(options: QueueGaugesOptions) {
    this.#options = options;
    this.#warn = throttledWarn(options.logger);
  }

  bind(sources: readonly QueueSource[] | undefined): void {
    const list = sources ? [...sources] : undefined;
    this.#loader = list
      ? new CachedLoader(
          async () => ({
            counts: await Promise.all(
              list.map(async (source) => ({ source, counts: await countsOf(source) })),
            ),
          }),
          this.#options.cacheMs,
        )
      : undefined;
  }

  async collect(): Promise<void> {
    const loader = this.#loader;
    if (loader) {
      try {
        this.#last = await loader.get();
      } catch (error) {
        this.#options.errors.inc({ source: 'queues' });
        this.#warn({ err: (error as Error).message }, 'could not count queue jobs for the metrics');
      }
    }
    if (this.#last && this.#last !== this.#applied) this.#apply(this.#last);
  }

  #apply(reading: QueueReading): void {
    this.#applied = reading;
    const { jobs, deadLetters } = this.#options;
    jobs.reset();
    deadLetters.reset();
    for (const { source, counts } of reading.counts) {
      for (const state of QUEUE_STATES) jobs.set({ queue: source.name, state }, counts[state]);
      if (source.receiver !== undefined) deadLetters.set({ receiver: source.receiver }, counts.failed);
    }
  }
}
