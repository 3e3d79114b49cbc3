import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ControlAccess,
  parseControlFrom,
  type Simulator,
  startSimulator,
} from '../../src/simulator/index.js';
import { runCli } from '../support/cli.js';

/**
 * Who may call `/_sim`: the matcher, then real HTTP from two loopback addresses (Linux routes all
 * of 127.0.0.0/8 to the loopback interface, so a client bound to 127.0.0.2 arrives from there).
 */

/** GET `url` from the local address `from`; resolves to the status and the body. */
function getFrom(url: string, from: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('ControlAccess', () => {
  it('allows loopback only by default, IPv4-mapped addresses included', () => {
    const access = new ControlAccess();
    expect(access.networks).toEqual(['127.0.0.0/8', '::1/128']);
    for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) {
      expect(access.allows(address), address).toBe(true);
    }
    for (const address of ['172.30.0.1', '::ffff:10.0.0.1', 'fe80::1', '', undefined, 'not-an-ip']) {
      expect(access.allows(address), String(address)).toBe(false);
    }
  });

  it('matches the networks it is given, and only those', () => {
    const access = new ControlAccess(['172.30.0.0/16', 'fd00::/8', '10.1.2.3']);
    expect(access.networks).toEqual(['172.30.0.0/16', 'fd00::/8', '10.1.2.3/32']);
    expect(access.allows('172.30.255.254')).toBe(true);
    expect(access.allows('::ffff:172.30.0.1')).toBe(true);
    expect(access.allows('fd12:3456::1')).toBe(true);
    expect(access.allows('10.1.2.3')).toBe(true);
    expect(access.allows('10.1.2.4')).toBe(false);
    expect(access.allows('172.31.0.1')).toBe(false);
    expect(access.allows('127.0.0.1')).toBe(false);
  });

  it('parses a comma-separated list, spaces and empty entries ignored', () => {
    expect(parseControlFrom('loopback, 172.30.0.0/16,')).toEqual(['loopback', '172.30.0.0/16']);
  });

  it('refuses what is not a network, naming the entry and what was expected', () => {
    const cases: Array<[string, string]> = [
      ['172.30.0.0/33', 'expected a prefix length from 0 to 32 after the "/" in "172.30.0.0/33"'],
      ['fd00::/129', 'expected a prefix length from 0 to 128 after the "/" in "fd00::/129"'],
      ['10.0.0.0/', 'expected a prefix length from 0 to 32 after the "/" in "10.0.0.0/"'],
      ['10.0.0.0/8x', 'expected a prefix length from 0 to 32 after the "/" in "10.0.0.0/8x"'],
      [
        '300.1.1.1/8',
        'expected a network like 172.30.0.0/16, fd00::/8, a single address or loopback; got "300.1.1.1/8"',
      ],
      ['localhost', 'got "localhost"'],
      ['', 'expected at least one network, e.g. loopback'],
      [
        Array.from({ length: 33 }, (_, i) => `10.0.${i}.0/24`).join(','),
        'expected at most 32 networks; got 33',
      ],
    ];
    for (const [text, message] of cases) expect(() => parseControlFrom(text), text).toThrow(message);
  });
});

describe('the control API over HTTP', () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('answers callers from an allowed network and refuses the others with 403, naming both', async () => {
    sim = await startSimulator({ vehicles: 1, robots: 0, controlFrom: ['127.0.0.2/32'] });
    const allowed = await getFrom(`${sim.url}/_sim/behaviours`, '127.0.0.2');
    expect(allowed.status).toBe(200);
    const refused = await getFrom(`${sim.url}/_sim/behaviours`, '127.0.0.1');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({
      error:
        'the control API answers callers from 127.0.0.2/32 only, not 127.0.0.1 (fleetwatch simulate --control-from <cidr> allows more)',
    });
    // The fleet API itself is not restricted.
    expect((await getFrom(`${sim.url}/v1/vehicles`, '127.0.0.1')).status).toBe(401);
  });

  it('refuses to start on a bad network list', async () => {
    await expect(startSimulator({ controlFrom: ['10.0.0.0/40'] })).rejects.toThrow(
      'expected a prefix length from 0 to 32 after the "/" in "10.0.0.0/40"',
    );
  });

  it('`fleetwatch simulate --control-from` passes the list to the server', async () => {
    await simulateCommand('loopback,127.0.0.2', async (base) => {
      expect((await getFrom(`${base}/_sim/state`, '127.0.0.2')).status).toBe(200);
      expect((await getFrom(`${base}/_sim/state`, '127.0.0.1')).status).toBe(200);
    });
    await simulateCommand('127.0.0.2/32', async (base) => {
      expect((await getFrom(`${base}/_sim/state`, '127.0.0.2')).status).toBe(200);
      expect((await getFrom(`${base}/_sim/state`, '127.0.0.1')).status).toBe(403);
    });
  });
});

/** Runs `fleetwatch simulate --control-from <list>` in process, calls `use` with its URL, stops it. */
async function simulateCommand(list: string, use: (url: string) => Promise<void>): Promise<void> {
  const stop = new AbortController();
  let announced: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => {
    announced = resolve;
  });
  const args = ['simulate', '--port', '0', '--vehicles', '1', '--robots', '0', '--log-level', 'warn'];
  args.push('--control-from', list);
  const run = runCli(args, {}, stop.signal, ({ stdout }) => {
    if (stdout.includes('\n')) announced(stdout.trim());
  });
  try {
    await use(await Promise.race([url, run.then((r) => Promise.reject(new Error(r.stderr)))]));
  } finally {
    stop.abort();
  }
  expect((await run).code).toBe(0);
}
