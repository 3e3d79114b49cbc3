import type { z } from 'zod';

/** JSON text read back from Redis as `schema`, or undefined when it is not (unreadable or another shape). */
export function decodeStored<T>(schema: z.ZodType<T>, text: string | null | undefined): T | undefined {
  if (text === null || text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
