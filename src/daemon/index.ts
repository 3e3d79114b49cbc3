export { type Daemon, type DaemonOptions, describePollers, startDaemon } from './daemon.js';
export { createEventsWorker, type EventsWorker, type EventsWorkerOptions } from './events-worker.js';
export { closeWorker, settlesWithin } from './shutdown.js';
