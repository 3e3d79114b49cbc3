import { readFile } from 'node:fs/promises';
import { BenchProcess } from './child.js';

/**
 * The machine's own latency over the measured cycles, the reference the latency beyond the poll
 * is read against (as the bare loop is for CPU): a process with nothing else to do wakes every
 * 10 ms, notes how late its timer fired, and makes one Redis round trip (`PING` on a socket of
 * its own) to the size's Redis. An event crosses a dozen such wake-ups and round trips between
 * fleetwatch, Redis and the receiver; when an idle process already waits tens of milliseconds for
 * a core, so does every hop. Costs one wake-up per 10 ms: well under 1 % of a core.
 */

/**
 * Plain JavaScript for `node -e`: argv[1] the Redis host, argv[2] its port, argv[3] the file the
 * results go to on SIGTERM, argv[4] the parent's pid (it exits once the parent is gone).
 */
const PROBE = `const net = require('node:net');
const fs = require('node:fs');
const [host, port, out, parent] = process.argv.slice(1);
const EVERY_MS = 10;
const late = [], rtt = [];
let pending = 0;
const socket = net.connect(Number(port), host);
socket.setNoDelay(true);
// A lost connection ends the round trips; the timer goes on.
socket.on('error', () => {});
// One PING at a time: the reply's line end closes the round trip under way.
socket.on('data', (chunk) => {
  if (pending > 0 && chunk.includes(10)) {
    rtt.push(performance.now() - pending);
    pending = 0;
  }
});
let due = performance.now() + EVERY_MS;
const tick = () => {
  const now = performance.now();
  late.push(Math.max(0, now - due));
  if (pending === 0 && !socket.destroyed) { pending = now; socket.write('PING\\r\\n'); }
  if (process.ppid !== Number(parent)) process.exit(0);
  due = now + EVERY_MS;
  setTimeout(tick, EVERY_MS);
};
setTimeout(tick, EVERY_MS);
process.on('SIGTERM', () => {
  fs.writeFileSync(out, JSON.stringify({ late, rtt }));
  process.exit(0);
});
process.stdout.write('ready\\n');`;

/** What the probe saw, in ms: its timer's lateness at each wake-up, and each round trip. */
export interface WakeupSamples {
  timerLate: number[];
  redisRoundTrip: number[];
}

export class WakeupProbe {
  readonly #process: BenchProcess;
  readonly #out: string;

  private constructor(process_: BenchProcess, out: string) {
    this.#process = process_;
    this.#out = out;
  }

  /** Starts the probe against the Redis at `redisUrl` and waits until it runs. */
  static async start(redisUrl: string, workDir: string): Promise<WakeupProbe> {
    const { hostname, port } = new URL(redisUrl);
    const out = `${workDir}/wakeup.json`;
    const probe = new BenchProcess(
      'wake-up probe',
      process.execPath,
      ['-e', PROBE, hostname, port || '6379', out, String(process.pid)],
      { logFile: `${workDir}/wakeup.log` },
    );
    await probe.firstLine();
    return new WakeupProbe(probe, out);
  }

  /** Ends the probe and hands over what it saw; undefined when it wrote nothing. */
  async stop(): Promise<WakeupSamples | undefined> {
    await this.#process.stop('SIGTERM', 5_000);
    try {
      const seen = JSON.parse(await readFile(this.#out, 'utf8')) as { late: number[]; rtt: number[] };
      return { timerLate: seen.late, redisRoundTrip: seen.rtt };
    } catch {
      return undefined;
    }
  }
}
