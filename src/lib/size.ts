/** Sizes in bytes as people write them: `512KiB`, `16MiB`, `1MB`, `2048` (bytes). */

const UNIT_BYTES = {
  b: 1,
  kb: 1_000,
  kib: 1_024,
  mb: 1_000_000,
  mib: 1_048_576,
  gb: 1_000_000_000,
  gib: 1_073_741_824,
} as const;

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/i;

/** Parses `16MiB`, `1.5MB`, `512KiB`, `100B` or `2048` into bytes; undefined when malformed. */
export function parseSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 'b').toLowerCase() as keyof typeof UNIT_BYTES;
  const value = Number(match[1]) * UNIT_BYTES[unit];
  return Number.isFinite(value) ? Math.round(value) : undefined;
}

/** Renders bytes in the largest binary unit that divides them: `16MiB`, `512KiB`, `1000B`. */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', UNIT_BYTES.gib],
    ['MiB', UNIT_BYTES.mib],
    ['KiB', UNIT_BYTES.kib],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${bytes}B`;
}
