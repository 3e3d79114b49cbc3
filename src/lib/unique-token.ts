import { randomBytes } from 'node:crypto';

/**
 * Tokens unique across processes and threads, for compare-and-set versions and revisions: a random
 * prefix drawn once per thread (each worker thread loads this module afresh) and a counter. Drawing
 * random bytes for every token cost a system call each; at 100,000 entities the aggregation groups'
 * versions alone were 2.5 % of the daemon thread's CPU. 64 random bits keep two processes' prefixes
 * apart; the counter keeps one process's tokens apart (2^53 of them before it could repeat).
 */
const PREFIX = randomBytes(8).toString('base64url');
let counter = 0;

export function uniqueToken(): string {
  counter += 1;
  return `${PREFIX}${counter.toString(36)}`;
}
