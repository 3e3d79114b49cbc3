import { useState } from 'preact/hooks';
import { ErrorLine } from '../components/error-line.js';
import type { ApiError } from '../lib/api.js';
import { logIn, type SessionView } from '../lib/session.js';

/**
 * The login: a token of `http.tokens` (or `http.api_token`) is exchanged for the session cookie
 * (`POST /api/session`); the token itself is never stored by the page.
 */
export function LoginPage({ onLoggedIn }: { onLoggedIn: (session: SessionView) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  return (
    <main class="login">
      <form
        aria-labelledby="login-title"
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            onLoggedIn(await logIn(token.trim()));
          } catch (caught) {
            setError(caught as ApiError);
          } finally {
            setBusy(false);
          }
        }}
      >
        <h1 id="login-title">fleetwatch</h1>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="current-password"
          required
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy || token.trim() === ''}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        <ErrorLine error={error} />
        <p class="hint">
          A token of <code>http.tokens</code> or <code>http.api_token</code>; its role decides what you may
          do.
        </p>
      </form>
    </main>
  );
}
