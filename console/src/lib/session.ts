import { api, useCsrfToken } from './api.js';

/** Who is logged in (`GET /api/session`). */
export interface SessionView {
  actor: string;
  role: 'read' | 'operate' | 'admin';
  via: 'bearer' | 'basic' | 'session';
  expiresAt: string | null;
  csrfToken: string | null;
}

/**
 * What the server says about access before any login: `open` when no token is configured (reads
 * are open, changes refused), `needed` when a login is, or the session itself.
 */
export type Access = { kind: 'open' } | { kind: 'needed' } | { kind: 'session'; session: SessionView };

export async function currentAccess(): Promise<Access> {
  try {
    const session = await api<SessionView>('/api/session');
    useCsrfToken(session.csrfToken);
    return { kind: 'session', session };
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 403) return { kind: 'open' };
    if (status === 401) return { kind: 'needed' };
    throw error;
  }
}

export async function logIn(token: string): Promise<SessionView> {
  const session = await api<SessionView>('/api/session', { method: 'POST', body: { token } });
  useCsrfToken(session.csrfToken);
  return session;
}

export async function logOut(): Promise<void> {
  await api('/api/session', { method: 'DELETE' });
  useCsrfToken(null);
}

/** Whether the role may change things (power, acknowledgements, silences, robot commands). */
export function mayOperate(access: Access): boolean {
  return access.kind === 'session' && access.session.role !== 'read';
}
