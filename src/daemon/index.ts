export { type Daemon, type DaemonOptions, describePollers, startDaemon } from './daemon.js';
