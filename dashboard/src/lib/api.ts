// The dashboard's only way to the gateway: same-origin fetch of /api with the session cookie.
// Errors carry the gateway's error object, so forms can show which field was refused and why.

export class ApiError extends Error {
  readonly status: number;
  readonly param: string | undefined;
  readonly code: string | undefined;
  constructor(status: number, message: string, param?: string, code?: string) {
    super(message);
    this.status = status;
    this.param = param;
    this.code = code;
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when any request answers 401 (the session expired or was revoked): the shell shows the login. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** Tells the shell the session is gone (a 401 from any /api call but the session's own). */
export function signalUnauthorized(): void {
  for (const l of unauthorizedListeners) l();
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  // X-Requested-With: the gateway then answers a 401 without a Basic challenge (no browser password dialog).
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json', 'x-requested-with': 'XMLHttpRequest' } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const err = (data as { error?: { message?: string; param?: string; code?: string } } | undefined)?.error;
    if (res.status === 401 && !path.startsWith('/api/session/')) signalUnauthorized();
    throw new ApiError(res.status, err?.message ?? `${res.status} ${res.statusText}`, err?.param, err?.code);
  }
  return data as T;
}

export const get = <T = unknown>(path: string): Promise<T> => api<T>('GET', path);
export const post = <T = unknown>(path: string, body?: unknown): Promise<T> => api<T>('POST', path, body ?? {});
export const put = <T = unknown>(path: string, body: unknown): Promise<T> => api<T>('PUT', path, body);
export const patch = <T = unknown>(path: string, body: unknown): Promise<T> => api<T>('PATCH', path, body);
export const del = <T = unknown>(path: string): Promise<T> => api<T>('DELETE', path);

/** `?a=1&b=x` from an object, leaving out empty values. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
