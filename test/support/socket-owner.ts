import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Which of our child processes holds one end of a loopback TCP connection, read from Linux's
 * `/proc` (the connection's inode in `/proc/net/tcp{,6}`, then the process whose file descriptors
 * point at it). A server that sees a request from `127.0.0.1:<port>` can so tell which replica sent
 * it. Returns undefined where `/proc` cannot answer (not Linux, or the connection is gone).
 */
export function connectionOwner(
  /** The port of the owner's end (the remote port the server sees). */
  ownPort: number,
  /** The port of the other end (the server's). */
  peerPort: number,
  candidates: readonly number[],
): number | undefined {
  const inode = connectionInode(ownPort, peerPort);
  if (inode === undefined) return undefined;
  const target = `socket:[${inode}]`;
  for (const pid of candidates) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid;
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  }
  return undefined;
}

function connectionInode(ownPort: number, peerPort: number): string | undefined {
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
      const fields = line.trim().split(/\s+/);
      const [local, remote, inode] = [fields[1], fields[2], fields[9]];
      if (!local || !remote || !inode || inode === '0') continue;
      if (portOf(local) === ownPort && portOf(remote) === peerPort) return inode;
    }
  }
  return undefined;
}

/** `0100007F:1F90` → 8080 (the port is the hex after the colon). */
function portOf(address: string): number {
  return Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
}
