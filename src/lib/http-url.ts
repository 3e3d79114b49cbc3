import { z } from 'zod';

const MESSAGE = 'must be an http(s) URL';

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A config field holding an absolute `http:` or `https:` URL, kept as written. */
export const httpUrlSchema = z.string({ error: MESSAGE }).refine(isHttpUrl, { error: MESSAGE });
