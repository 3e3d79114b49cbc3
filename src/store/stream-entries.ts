/** Helpers for Redis stream replies (RESP2 shapes; ioredis 6 keeps them under its default `legacy` mapping). */

/** `[streamId, [field, value, ...]]`; fields are null for an entry deleted while pending (Redis 6.2). */
export type RawStreamEntry = [id: string, fields: string[] | null];

/** XREAD / XREADGROUP reply. */
export type RawStreamsReply = Array<[key: string, entries: RawStreamEntry[]]> | null;

/** XAUTOCLAIM reply: next cursor, claimed entries, (Redis 7+) ids of entries that no longer exist. */
export type RawAutoclaimReply = [cursor: string, entries: RawStreamEntry[], deleted?: string[]];

export function fieldsToRecord(fields: readonly string[] | null): Record<string, string> {
  const record: Record<string, string> = {};
  if (!fields) return record;
  for (let i = 0; i + 1 < fields.length; i += 2) record[fields[i]!] = fields[i + 1]!;
  return record;
}

/** Entries of the first stream of an XREAD/XREADGROUP reply. */
export function firstStreamEntries(reply: RawStreamsReply): RawStreamEntry[] {
  return reply?.[0]?.[1] ?? [];
}

const STREAM_ID = /^(\d+)(?:-(\d+))?$/;
/** Both parts of a stream id are unsigned 64-bit numbers: Redis refuses anything larger. */
const MAX_PART = 2n ** 64n - 1n;

function fits(part: string | undefined): boolean {
  return part === undefined || (part.length <= 20 && BigInt(part) <= MAX_PART);
}

/** `1767225600000-0` or `1767225600000`, within what Redis accepts as a stream id. */
export function isStreamId(value: string): boolean {
  const match = STREAM_ID.exec(value);
  return match !== null && fits(match[1]) && fits(match[2]);
}

/** Milliseconds part of a stream id (when Redis recorded the entry). */
export function streamIdTime(id: string): number {
  const match = STREAM_ID.exec(id);
  return match ? Number(match[1]) : Number.NaN;
}
