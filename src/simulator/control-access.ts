import { BlockList, isIP } from 'node:net';

/** At most this many networks in `--control-from`: a list of networks, not an address book. */
export const CONTROL_FROM_LIMIT = 32;

/** `loopback` in the list stands for both loopback networks. */
const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/**
 * Who may call the simulator's `/_sim` control API, which has no authentication: loopback by
 * default; `--control-from` names the networks (CIDR, a bare address, or `loopback`) when the
 * callers are elsewhere, e.g. the host reaching a simulator in a container through the bridge.
 */
export class ControlAccess {
  readonly networks: readonly string[];
  readonly #list = new BlockList();

  /** Throws a one-line message naming the entry and what was expected (see {@link parseControlFrom}). */
  constructor(entries: readonly string[] = ['loopback']) {
    if (entries.length === 0) throw new Error('expected at least one network, e.g. loopback');
    if (entries.length > CONTROL_FROM_LIMIT) {
      throw new Error(`expected at most ${CONTROL_FROM_LIMIT} networks; got ${entries.length}`);
    }
    const networks: string[] = [];
    for (const entry of entries) {
      for (const network of entry === 'loopback' ? LOOPBACK : [entry]) {
        const { address, prefix, family } = parseNetwork(network);
        this.#list.addSubnet(address, prefix, family);
        networks.push(`${address}/${prefix}`);
      }
    }
    this.networks = networks;
  }

  /** Whether a caller at `address` (as `socket.remoteAddress` gives it) may use the control API. */
  allows(address: string | undefined): boolean {
    const family = address === undefined ? 0 : isIP(address);
    if (family === 0) return false;
    // BlockList matches an IPv4-mapped IPv6 address (::ffff:a.b.c.d) against IPv4 networks too.
    return this.#list.check(address!, family === 4 ? 'ipv4' : 'ipv6');
  }
}

function parseNetwork(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const family = isIP(address);
  if (family === 0) {
    throw new Error(
      `expected a network like 172.30.0.0/16, fd00::/8, a single address or loopback; got "${text}"`,
    );
  }
  const max = family === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(max) : text.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) {
    throw new Error(`expected a prefix length from 0 to ${max} after the "/" in "${text}"`);
  }
  return { address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}

/** `--control-from loopback,172.30.0.0/16`: the comma-separated list, checked (throws like the constructor). */
export function parseControlFrom(text: string): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  new ControlAccess(entries);
  return entries;
}
