/**
 * The console's one way to the API: same origin, the session cookie, and on every change the
 * session's CSRF token (`X-CSRF-Token`). An answer that is not 2xx becomes an `ApiError` carrying
 * the API's own `{error: {code, message}}`, so a page shows what the server said.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Set from the session (`GET /api/session`, the login's answer); cleared on logout. */
export function useCsrfToken(token: string | null): void {
  csrfToken = token;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
}

/** Listeners told when the API answers 401: the session ended, show the login. */
const onUnauthorized = new Set<() => void>();
export function whenUnauthorized(listener: () => void): () => void {
  onUnauthorized.add(listener);
  return () => onUnauthorized.delete(listener);
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  const parsed: unknown = text === '' ? undefined : safeJson(text);
  if (!response.ok) {
    if (response.status === 401) for (const listener of onUnauthorized) listener();
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | undefined)
      ?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `http_${response.status}`,
      error?.message ?? `${method} ${url.pathname} answered ${response.status}`,
      error?.details,
    );
  }
  return parsed as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: { code: 'not_json', message: text.slice(0, 200) } };
  }
}
