import type { ApiError } from '../lib/api.js';

/** What the API said, as one line a person can act on (role, gateway, validation). */
export function ErrorLine({ error }: { error: ApiError | Error | undefined }) {
  if (!error) return null;
  const code = 'code' in error ? ` (${(error as ApiError).code})` : '';
  return (
    <p class="error" role="alert">
      {error.message}
      {code}
    </p>
  );
}
