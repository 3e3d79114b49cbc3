import { describe, expect, it } from 'vitest';
import { type Component, lifecycle } from '../../src/lib/lifecycle.js';

/** Components that write what happens to them into `log`; the clock moves only when told. */
function rig(names: string[], over: Record<string, Partial<Component>> = {}) {
  const log: string[] = [];
  const clock = { now: 0 };
  const components: Component[] = names.map((name) => ({
    name,
    start: () => {
      log.push(`start ${name}`);
    },
    stop: (remaining: number) => {
      log.push(`stop ${name} ${remaining}`);
    },
    ...over[name],
  }));
  return { log, clock, components };
}

describe('lifecycle', () => {
  it('starts in list order and stops in reverse, once', async () => {
    const { log, clock, components } = rig(['a', 'b', 'c']);
    const parts = lifecycle(components, { graceMs: 1_000, now: () => clock.now });
    parts.start();
    expect(log).toEqual(['start a', 'start b', 'start c']);
    const first = parts.stop();
    expect(parts.stop()).toBe(first);
    await first;
    expect(log.slice(3)).toEqual(['stop c 1000', 'stop b 1000', 'stop a 1000']);
    expect(() => parts.start()).toThrow(/started once/);
  });

  it('gives each stop what is left of the grace, never less than 0', async () => {
    const { log, clock, components } = rig(['connections', 'worker', 'server'], {
      server: {
        stop: async (remaining) => {
          log.push(`stop server ${remaining}`);
          clock.now += 300;
        },
      },
      worker: {
        stop: async (remaining) => {
          log.push(`stop worker ${remaining}`);
          clock.now += 5_000;
        },
      },
    });
    const parts = lifecycle(components, { graceMs: 1_000, now: () => clock.now });
    parts.start();
    await parts.stop();
    expect(log.slice(3)).toEqual(['stop server 1000', 'stop worker 700', 'stop connections 0']);
  });

  it('stops the rest when one stop throws', async () => {
    const { log, components } = rig(['a', 'b', 'c'], {
      b: {
        stop: async () => {
          throw new Error('b is stuck');
        },
      },
    });
    const parts = lifecycle(components, { graceMs: 10, now: () => 0 });
    parts.start();
    await parts.stop();
    expect(log.slice(3)).toEqual(['stop c 10', 'stop a 10']);
  });

  it('stops what had started when a start throws, and passes the error on', async () => {
    const { log, components } = rig(['a', 'b', 'c'], {
      b: {
        start: () => {
          throw new Error('no port');
        },
      },
    });
    const parts = lifecycle(components, { graceMs: 10, now: () => 0 });
    expect(() => parts.start()).toThrow('no port');
    await parts.stop();
    expect(log).toEqual(['start a', 'stop a 10']);
  });

  it('starts a part with `after` once it resolves, in list order, and never once stopping', async () => {
    let connect!: () => void;
    const connected = new Promise<void>((resolve) => {
      connect = resolve;
    });
    const { log, components } = rig(['connections', 'worker', 'relay', 'server'], {
      worker: { after: connected },
      relay: { after: connected },
    });
    const parts = lifecycle(components, { graceMs: 10, now: () => 0 });
    parts.start();
    expect(log).toEqual(['start connections', 'start server']);
    connect();
    await connected;
    expect(log).toEqual(['start connections', 'start server', 'start worker', 'start relay']);
    await parts.stop();
    expect(log.slice(4)).toEqual([
      'stop server 10',
      'stop relay 10',
      'stop worker 10',
      'stop connections 10',
    ]);

    let never!: () => void;
    const late = rig(['connections', 'worker'], {
      worker: {
        after: new Promise<void>((resolve) => {
          never = resolve;
        }),
      },
    });
    const stopped = lifecycle(late.components, { graceMs: 10, now: () => 0 });
    stopped.start();
    await stopped.stop();
    never();
    await Promise.resolve();
    // Its stop is called (it must be safe on a part that never ran), its start never.
    expect(late.log).toEqual(['start connections', 'stop worker 10', 'stop connections 10']);
  });
});
