import { localTime, utcTime } from '../lib/time.js';

/** A time in the viewer's zone; UTC on hover; machine-readable for tests and screen readers. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={utcTime(iso)}>
      {localTime(iso)}
    </time>
  );
}
