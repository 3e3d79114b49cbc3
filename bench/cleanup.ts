/**
 * The one way out for everything the benchmark starts (redis-server, the simulator, fleetwatch,
 * blackbox_exporter, the CPU hog, the webhook receiver): each registers how to stop it while it
 * runs. A normal end stops them in the measurement's own order; SIGINT, SIGTERM or an error that
 * escapes stop whatever is still registered, newest first, and exit (130, 143, 1). If even that is
 * cut short (a second signal, `process.exit` elsewhere), the exit hook SIGKILLs every pid still
 * registered. Only SIGKILL of the benchmark itself escapes all of this (the hog watches its parent).
 */

interface Entry {
  name: string;
  stop: () => Promise<void>;
  pid: number | undefined;
}

const entries: Entry[] = [];
const aborted = new AbortController();
let installed = false;
let stopping: Promise<void> | undefined;

/** Aborted once the benchmark is being stopped: pass it to short-lived children (execFile). */
export const stopSignal: AbortSignal = aborted.signal;

/** Stops every registered thing, newest first; each failure is swallowed (the rest still stop). */
export function stopAll(): Promise<void> {
  stopping ??= (async () => {
    aborted.abort(new Error('the benchmark is stopping'));
    while (entries.length > 0) {
      const entry = entries.pop()!;
      await entry.stop().catch(() => undefined);
    }
  })().finally(() => {
    stopping = undefined;
  });
  return stopping;
}

function killRemaining(): void {
  for (const { pid } of entries) {
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  const code = signal === 'SIGINT' ? 130 : 143;
  if (stopping) {
    // A second signal: no more waiting.
    killRemaining();
    process.exit(code);
  }
  process.stderr.write(`${signal}: stopping what the benchmark started\n`);
  void stopAll().finally(() => process.exit(code));
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killRemaining);
}

/**
 * Registers something to stop; returns the function that unregisters it (call it once it has
 * stopped by itself). `pid`, when known, lets the exit hook SIGKILL it as a last resort.
 */
export function track(name: string, stop: () => Promise<void>, pid?: number): () => void {
  install();
  const entry: Entry = { name, stop, pid };
  entries.push(entry);
  return () => {
    const index = entries.indexOf(entry);
    if (index >= 0) entries.splice(index, 1);
  };
}

/** What is registered now (tests and progress lines). */
export function tracked(): Array<{ name: string; pid: number | undefined }> {
  return entries.map(({ name, pid }) => ({ name, pid }));
}

/**
 * Runs the benchmark's main work: an error that escapes it stops everything still registered,
 * prints one line and exits 1.
 */
export async function runGuarded(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    await stopAll();
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
