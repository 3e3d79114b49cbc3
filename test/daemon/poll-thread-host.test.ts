import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { PollThreadHost } from '../../src/daemon/poll-thread-host.js';
import { testConfig } from '../pollers/harness.js';
import { captureJsonLog } from '../support/json-log.js';
import { uniquePrefix } from '../support/redis.js';

const noHooks = { poll: {}, upstream: { request: () => {} }, events: () => {}, jobFailed: () => {} };

describe('PollThreadHost', () => {
  it('reports a thread that ends on its own once, with its error in the log', async () => {
    const { lines, logger } = captureJsonLog();
    // Without its pollers section the thread throws while it builds its polling core.
    const broken = { ...testConfig('http://127.0.0.1:9', uniquePrefix()), pollers: undefined };
    const failures: string[] = [];
    const failed = new Promise<void>((resolve) => {
      new PollThreadHost({
        config: broken as unknown as Config,
        logger,
        hooks: noHooks,
        onFailure: (reason) => {
          failures.push(reason);
          resolve();
        },
      });
    });
    await failed;
    expect(failures).toEqual([
      'the poll thread ended (exit code 1); fleetwatch stops, as it no longer polls',
    ]);
    expect(lines.filter((line) => line.msg === 'the poll thread failed')).toHaveLength(1);
  });

  it('says a stop after the thread ended was forced, without waiting for the grace', async () => {
    const { logger } = captureJsonLog();
    const broken = { ...testConfig('http://127.0.0.1:9', uniquePrefix()), pollers: undefined };
    let host: PollThreadHost | undefined;
    await new Promise<void>((resolve) => {
      host = new PollThreadHost({
        config: broken as unknown as Config,
        logger,
        hooks: noHooks,
        onFailure: () => resolve(),
      });
    });
    const started = Date.now();
    expect(await host?.stop(60_000)).toBe('forced');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
