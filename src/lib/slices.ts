/**
 * The most items spread into one call: a Redis command's arguments, or a function's. A call's
 * arguments live on the stack, and one of a few hundred thousand (a storm's incidents, a group's
 * event ids) throws `RangeError: Maximum call stack size exceeded`; a Redis command that long also
 * holds the server for its whole length.
 */
export const ITEMS_PER_CALL = 1_000;

/** `items` cut into consecutive slices of at most `size` (the last may be shorter). */
export function slices<T>(items: readonly T[], size: number = ITEMS_PER_CALL): T[][] {
  if (!(size >= 1)) throw new RangeError('size must be 1 or more');
  const found: T[][] = [];
  for (let start = 0; start < items.length; start += size) found.push(items.slice(start, start + size));
  return found;
}
