import './app.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorLine } from './components/error-line.js';
import { whenUnauthorized } from './lib/api.js';
import { href, useRoute } from './lib/router.js';
import { type Access, currentAccess, logOut } from './lib/session.js';
import { useTheme } from './lib/theme.js';
import { PAGES } from './pages/index.js';
import { LoginPage } from './pages/login.js';
import { NoSuchPage } from './pages/no-such-page.js';

/**
 * The console: one page served by `fleetwatch run` at `/`, same origin as the API, on the session
 * cookie. It asks who is looking (`GET /api/session`), shows the login when a token is needed,
 * then the section the hash names.
 */
function App() {
  const [access, setAccess] = useState<Access | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const route = useRoute();
  const [theme, toggleTheme] = useTheme();

  useEffect(() => {
    currentAccess().then(setAccess, setError);
    return whenUnauthorized(() => setAccess({ kind: 'needed' }));
  }, []);

  if (error) return <ErrorLine error={error} />;
  if (!access) return <p class="hint">Loading…</p>;
  if (access.kind === 'needed')
    return <LoginPage onLoggedIn={(session) => setAccess({ kind: 'session', session })} />;

  const entry = PAGES.find((candidate) => candidate.page === route.page);
  const sections = PAGES.filter((candidate) => candidate.nav);
  return (
    <>
      <PageFocus page={route.page} title={entry ? (entry.nav ?? entry.page) : 'no such page'} />
      {/* The hash is the route here, so the skip link is a button that moves focus, not an anchor. */}
      <button type="button" class="skip" onClick={() => document.getElementById('content')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">fleetwatch</span>
        <nav aria-label="Sections">
          {sections.map((candidate) => (
            <a
              key={candidate.page}
              href={href(candidate.page)}
              aria-current={candidate.page === entry?.page ? 'page' : undefined}
            >
              {candidate.nav}
            </a>
          ))}
        </nav>
        <span class="who">
          {access.kind === 'session' ? (
            <>
              {access.session.actor} <span class="role">{access.session.role}</span>
              {access.session.via === 'session' ? (
                <button
                  type="button"
                  class="link"
                  onClick={async () => {
                    await logOut().catch(() => {});
                    setAccess({ kind: 'needed' });
                  }}
                >
                  Log out
                </button>
              ) : null}
            </>
          ) : (
            <span class="role" title="No token is configured: reads are open, changes are refused">
              read-only
            </span>
          )}
          <button
            type="button"
            class="link"
            onClick={toggleTheme}
            aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
          >
            {theme === 'dark' ? '☀' : '☾'}
          </button>
        </span>
      </header>
      <main id="content" tabIndex={-1}>
        {entry ? (
          <entry.component route={route} access={access} />
        ) : (
          <NoSuchPage page={route.page} sections={sections} />
        )}
      </main>
    </>
  );
}

/**
 * On a change of page: the document's title names it, and focus moves to the content (as a new
 * page's load would start there), so a keyboard or screen reader user is not left in the nav.
 */
function PageFocus({ page, title }: { page: string; title: string }) {
  const first = useRef(true);
  useEffect(() => {
    document.title = `${title[0]?.toUpperCase() ?? ''}${title.slice(1)} · fleetwatch`;
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('content')?.focus({ preventScroll: true });
  }, [page, title]);
  return null;
}

const root = document.getElementById('app');
if (root) render(<App />, root);
