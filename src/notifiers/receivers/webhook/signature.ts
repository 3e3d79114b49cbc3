import { createHmac } from 'node:crypto';
import { secretKey } from './config.js';

/**
 * Standard Webhooks signatures (pure): `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by
 * the base64-decoded part of a `whsec_` secret. The body is hashed as the exact bytes sent
 * (a string is taken as UTF-8, as it goes on the wire).
 *
 * Given several secrets (a rotation), the result is the `webhook-signature` list: one `v1,…` per
 * secret, space-separated, so a receiver that knows any one of them verifies the request.
 * Throws on a secret the config schema would have refused, or a timestamp that is not unix seconds.
 */
export function sign(
  secrets: string | readonly string[],
  id: string,
  timestampSeconds: number,
  body: string | Uint8Array,
): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0) throw new Error('at least one signing secret is needed');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new Error('the timestamp must be whole unix seconds');
  }
  const signed = Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`, 'utf8'), toBytes(body)]);
  return list
    .map((secret) => {
      const key = secretKey(secret);
      // The message names no part of the secret: errors end up in logs.
      if (key === undefined) throw new Error('not a usable whsec_ signing secret');
      return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
    })
    .join(' ');
}

function toBytes(body: string | Uint8Array): Buffer {
  return typeof body === 'string'
    ? Buffer.from(body, 'utf8')
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}
