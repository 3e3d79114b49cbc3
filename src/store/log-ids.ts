/**
 * Positions in an event log kept over N shards. Each shard's stream numbers its entries
 * `<ms>-<seq>`, and two shards may give the same id to different entries. The merged log names an
 * entry `<ms>-<seq × N + shard>`: still a stream id (what the API, the CLI and SSE `Last-Event-ID`
 * take), unique, and ordered by time like the shards' own ids. With one shard it is the stream id
 * itself. Each function below turns a merged position into one shard's XRANGE / XREVRANGE / XREAD
 * bound, so a reader pages or resumes every shard from the same place.
 */

function parts(id: string): [bigint, bigint] {
  const dash = id.indexOf('-');
  return dash < 0 ? [BigInt(id), 0n] : [BigInt(id.slice(0, dash)), BigInt(id.slice(dash + 1))];
}

/** The merged id of entry `streamId` of `shard` of `shards`. */
export function toLogId(streamId: string, shard: number, shards: number): string {
  if (shards === 1) return streamId;
  const [ms, seq] = parts(streamId);
  return `${ms}-${seq * BigInt(shards) + BigInt(shard)}`;
}

/** The shard and its own stream id of a merged id. */
export function fromLogId(logId: string, shards: number): { shard: number; streamId: string } {
  if (shards === 1) return { shard: 0, streamId: logId };
  const [ms, merged] = parts(logId);
  const n = BigInt(shards);
  return { shard: Number(merged % n), streamId: `${ms}-${merged / n}` };
}

/** XRANGE start bound of `shard` for the entries after merged id `logId` (exclusive). */
export function startAfter(logId: string, shard: number, shards: number): string {
  if (shards === 1) return `(${logId}`;
  const [ms, merged] = parts(logId);
  const rest = merged - BigInt(shard);
  // Integer division of a non-negative bigint floors.
  return rest < 0n ? `${ms}-0` : `(${ms}-${rest / BigInt(shards)}`;
}

/** XREVRANGE end bound of `shard` for the entries before merged id `logId` (exclusive). */
export function endBefore(logId: string, shard: number, shards: number): string {
  if (shards === 1) return `(${logId}`;
  const [ms, merged] = parts(logId);
  const rest = merged - BigInt(shard);
  const n = BigInt(shards);
  // Entries of this shard and millisecond with seq < ceil(rest / n) come before.
  return rest <= 0n ? `(${ms}-0` : `(${ms}-${(rest + n - 1n) / n}`;
}

const MAX_SEQ = 2n ** 64n - 1n;

/** XREAD id of `shard` (entries after it are read) for the entries after merged id `logId`. */
export function readAfter(logId: string, shard: number, shards: number): string {
  if (shards === 1) return logId;
  const [ms, merged] = parts(logId);
  const rest = merged - BigInt(shard);
  if (rest >= 0n) return `${ms}-${rest / BigInt(shards)}`;
  // Every entry of this millisecond comes after: read from the end of the one before.
  return ms === 0n ? '0-0' : `${ms - 1n}-${MAX_SEQ}`;
}

/** Orders merged ids (`<ms>-<n>`) by time, then number. */
export function compareLogIds(a: string, b: string): number {
  const [aMs, aSeq] = parts(a);
  const [bMs, bSeq] = parts(b);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}
