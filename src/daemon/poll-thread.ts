import { setMaxListeners } from 'node:events';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { watchGcPauses } from '../lib/gc-pauses.js';
import {
  closeQuietly,
  createProducerConnection,
  createWorkerConnection,
  redisEndpoint,
  waitForReady,
} from '../lib/redis-connection.js';
import { settlesWithin } from '../lib/shutdown.js';
import { lowerThisThreadPriority, POLL_THREAD_NICENESS } from '../lib/thread-priority.js';
import { createLogger } from '../log/logger.js';
import { createPollQueues } from '../pollers/poll-queue.js';
import { POLL_LANES } from '../pollers/poller.js';
import {
  type FromPollThread,
  type PollThreadData,
  recordingHooks,
  type ToPollThread,
} from './poll-thread-protocol.js';
import { buildPollWork } from './poll-work.js';
import { buildPollingCore } from './polling-core.js';

/**
 * The poll thread (`worker.poll_thread: true`): the scheduler, the poll workers and the polling
 * core they drive, on an event loop (and a heap) of their own. Polls come back from a fast
 * upstream in bursts, and their parsing, detection and commits then hold a loop for tens of
 * milliseconds; on the daemon's own loop every round trip of a notification under way waits
 * behind them. Here they only share the cores, and at a lower priority (lib/thread-priority.ts):
 * when the cores are busy, the notification path goes first.
 *
 * It is one more replica as far as Redis is concerned: its own connections, upstream client
 * (token, in-flight slots), counting windows and store guard, exactly as a second `fleetwatch run`
 * would have. What it reports goes to the daemon: log lines (written by the daemon's logger) and
 * the poll hooks' calls (metrics), see poll-thread-protocol.ts.
 */

function outsideTheDaemon(): never {
  throw new Error('the poll thread runs inside the daemon (worker.poll_thread)');
}
const port = parentPort ?? outsideTheDaemon();
const { config, logLevel } = workerData as PollThreadData;
const post = (message: FromPollThread) => port.postMessage(message);
const logger = createLogger({
  level: logLevel,
  format: 'json',
  destination: { write: (line: string) => post({ type: 'log', line }) },
}).child({ thread: 'poll' });
const hooks = recordingHooks(post, Date.now);
const priority = lowerThisThreadPriority(POLL_THREAD_NICENESS);
if (priority.lowered) logger.debug({ nice: priority.nice }, 'the poll thread runs at a lower priority');
else logger.info({ reason: priority.reason }, "the poll thread runs at the daemon's priority");

const endpoint = redisEndpoint(config.redis);
const producer = createProducerConnection(endpoint, { name: 'poll-thread', logger });
const storeConnection = createProducerConnection(endpoint, { name: 'poll-thread-store', logger });
const pollConnection = createWorkerConnection(endpoint, { name: 'poll-worker', logger });
const abort = new AbortController();
// Every upstream read under way listens to it: far more than the default 10 listeners.
setMaxListeners(0, abort.signal);
const { guard, windows, upstream, runner } = buildPollingCore({
  config,
  redis: storeConnection,
  logger,
  now: Date.now,
  hooks: [hooks.poll],
  observers: [hooks.upstream],
  onCommitted: hooks.events,
  // The daemon's guard follows these commits too, instead of reading every open incident again.
  onIncidentsChanged: hooks.incidents,
  signal: abort.signal,
});
const queues = createPollQueues({ connection: producer, prefix: config.redis.prefix, logger });
const work = buildPollWork({
  config,
  runner,
  queues,
  connection: pollConnection,
  logger,
  now: Date.now,
  onJobFailed: hooks.jobFailed,
  abort,
});

/**
 * How often the thread reports its heap to the daemon's metrics: prom-client's heap gauges read
 * only the thread they run on, and a scrape cannot reach into this one.
 */
const HEAP_REPORT_MS = 10_000;
const reportHeap = () => {
  const heap = getHeapStatistics();
  hooks.heap?.(heap.used_heap_size, heap.total_heap_size);
};
let heapReports: NodeJS.Timeout | undefined;
// Each collection as it happens: nodejs_gc_duration_seconds sees only the daemon's thread.
const stopGcPauses = hooks.gc ? watchGcPauses(hooks.gc) : () => {};
let stopping = false;

async function stop(graceMs: number): Promise<void> {
  stopping = true;
  clearInterval(heapReports);
  stopGcPauses();
  const polls = await work.stop(graceMs);
  await settlesWithin(Promise.all([windows.stop(), guard.stop()]), 2_000);
  await settlesWithin(Promise.all(POLL_LANES.map((lane) => queues[lane].close())), 2_000);
  await closeQuietly([pollConnection, storeConnection, producer]);
  await settlesWithin(upstream.close(), 5_000);
  hooks.flush();
  post({ type: 'stopped', polls });
  port.close();
}

port.on('message', (message: ToPollThread) => {
  switch (message.type) {
    case 'start':
      // The daemon's connections are ready; this thread's own may still be connecting.
      Promise.all([waitForReady(producer), waitForReady(storeConnection)]).then(
        () => {
          guard.start();
          if (config.pollers.upstream.enabled) windows.start();
          work.start();
          if (stopping) return;
          reportHeap();
          heapReports = setInterval(reportHeap, HEAP_REPORT_MS);
          heapReports.unref();
        },
        // Closed before it was ready: the thread is stopping.
        () => undefined,
      );
      break;
    case 'detectors':
      runner.useDetectors(message.detectors);
      break;
    case 'stop':
      stop(message.graceMs).catch((error: unknown) => {
        logger.error({ err: (error as Error).message }, 'error while stopping the poll thread');
        post({ type: 'stopped', polls: 'forced' });
        port.close();
      });
      break;
  }
});
