import type { Readable } from 'node:stream';

/**
 * Reading what a receiver answered, within bounds: its body (kept only in part), a one-line
 * excerpt for a reason or a log line, and why there was no answer at all (`http-post.ts` sends).
 */

/** Characters of an excerpt by default. */
export const EXCERPT_LENGTH = 200;
/** A body longer than this is not read to the end: the connection is dropped instead. */
export const MAX_DRAINED_BYTES = 1_048_576;

/**
 * Reads the whole body (so the connection goes back to the pool) keeping its first `keep` bytes;
 * a body past `maxBytes` (1 MiB) is cut off instead. A body that fails half-way changes nothing:
 * the status has already arrived.
 */
export async function readBounded(
  body: Readable,
  keep: number,
  maxBytes = MAX_DRAINED_BYTES,
): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  try {
    for await (const chunk of body) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      if (keptBytes < keep) {
        const part = bytes.subarray(0, keep - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      total += bytes.length;
      if (total > maxBytes) break;
    }
  } catch {
    // The answer's status is what counts.
  }
  return Buffer.concat(kept).toString('utf8');
}

/** One line of at most `max` characters: control characters and runs of white space collapsed. */
export function excerptOf(text: string, max = EXCERPT_LENGTH): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/**
 * Why an exchange got no answer, in one line to be scrubbed and cut: the error's code (`ECONNREFUSED`)
 * when it has one, then its message.
 */
export function describeError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' && message !== '' ? message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code} ${text}` : text;
}
